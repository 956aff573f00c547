"""The only module that writes session files.

Two kinds of write, both refusing when the file changed since pitools read it:

* :func:`atomic_replace` — whole-file rewrite (``migrate --in-place``): temp file in the same
  folder, fsync, re-check, ``os.replace``, fsync of the folder. A crash leaves either the
  original or the complete new file.
* :func:`append_line` — one fsynced ``write`` of one complete line (``compact --apply``), under
  an advisory lock, after checking the file still ends where and how pitools read it.

A backup copy (``<file>.bak-<UTC time>``) is kept unless the caller says not to.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pitools.core.errors import PitoolsError, SessionChangedError

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What the file looked like when read: size, mtime and a content hash."""

    size: int
    mtime_ns: int
    sha256: str
    ends_with_newline: bool


def stamp(path: str | os.PathLike[str]) -> FileStamp:
    """Hash the file once (streaming) so later writes can prove nothing changed."""
    h = hashlib.sha256()
    last = b""
    # Non-blocking open: a FIFO must not wait for a writer before it is refused.
    with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            # Every writer stamps first: a pipe or a device (/dev/zero) is refused before any read.
            raise PitoolsError(
                "not a regular file (a pipe, device or socket); pitools only rewrites regular files",
                path=os.fspath(path),
            )
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            last = chunk[-1:]
    return FileStamp(st.st_size, st.st_mtime_ns, h.hexdigest(), last in (b"", b"\n"))


def _matches(path: str | os.PathLike[str], expected: FileStamp) -> bool:
    # An equal size and mtime is not proof: a same-size rewrite within one timestamp tick (or
    # with the mtime put back) would slip through, so the content hash always decides.
    if os.stat(path).st_size != expected.size:
        return False
    return stamp(path).sha256 == expected.sha256


def check_unchanged(path: str | os.PathLike[str], expected: FileStamp) -> None:
    if not _matches(path, expected):
        raise SessionChangedError(
            "the file changed since pitools read it (another process is writing to it?); nothing was written",
            path=os.fspath(path),
        )


def backup_path(path: str | os.PathLike[str]) -> Path:
    now = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return Path(f"{os.fspath(path)}.bak-{now}")


def make_backup(path: str | os.PathLike[str]) -> Path:
    """Copy ``path`` next to itself (fsynced) and return the copy's path."""
    target = backup_path(path)
    created = False
    try:
        with open(path, "rb") as src, open(target, "xb") as dst:
            created = True
            shutil.copyfileobj(src, dst, _CHUNK)
            dst.flush()
            os.fsync(dst.fileno())
        shutil.copymode(path, target)
    except OSError as exc:
        if created:  # never delete a file this call did not create
            with contextlib.suppress(OSError):
                target.unlink()
        raise PitoolsError(
            f"cannot write the backup copy ({exc.strerror or exc}); nothing was changed (use --no-backup to skip it)",
            path=os.fspath(path),
        ) from None
    _fsync_dir(target.parent)
    return target


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _locked(path: str | os.PathLike[str]) -> Iterator[int]:
    """An advisory exclusive lock on the file (``flock``), where the platform has one."""
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX
            pass
        yield fd
    finally:
        os.close(fd)


def _wrap_os_error(exc: OSError, path: str | os.PathLike[str]) -> PitoolsError:
    return PitoolsError(f"cannot write: {exc.strerror or exc}; the original file is unchanged", path=os.fspath(path))


def write_new(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write a new file atomically; refuses to overwrite an existing one."""
    target = Path(path)
    if target.exists():
        raise PitoolsError("output file already exists; choose another path", path=os.fspath(path))
    _write_then_rename(target, chunks, expected=None, source=None)


def atomic_replace(
    path: str | os.PathLike[str], chunks: Iterable[bytes], *, expected: FileStamp, backup: bool = True
) -> Path | None:
    """Replace ``path`` with ``chunks`` atomically; returns the backup path, if one was made."""
    target = Path(path)
    made = make_backup(target) if backup else None
    try:
        _write_then_rename(target, chunks, expected=expected, source=target)
    except BaseException:
        if made is not None:
            with contextlib.suppress(OSError):
                made.unlink()
        raise
    return made


def _write_then_rename(
    target: Path, chunks: Iterable[bytes], *, expected: FileStamp | None, source: Path | None
) -> None:
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".pitools-tmp", dir=folder)
    except OSError as exc:
        raise _wrap_os_error(exc, target) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        if source is not None:
            shutil.copymode(source, tmp)
            with _locked(source):
                if expected is not None:
                    check_unchanged(source, expected)
                os.replace(tmp, target)
        else:
            os.replace(tmp, target)
        _fsync_dir(folder)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _wrap_os_error(exc, target) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def append_line(path: str | os.PathLike[str], line: bytes, *, expected: FileStamp, backup: bool = True) -> Path | None:
    """Append one complete line (``line`` must end with ``\\n``) with a single fsynced write."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("append_line takes exactly one newline-terminated line")
    if not expected.ends_with_newline:
        raise PitoolsError(
            "the file's last line has no newline (torn write?); appending would fuse two lines. "
            "Repair it first (e.g. `pitools migrate --in-place` rewrites it terminated) and retry",
            path=os.fspath(path),
        )
    made: Path | None = None
    try:
        with _locked(path):
            check_unchanged(path, expected)
            # The backup is taken only once the write is known to go ahead.
            made = make_backup(path) if backup else None
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                view = memoryview(line)
                try:
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                    os.fsync(fd)
                except OSError:
                    # A partial line (disk full after a short write) must not stay behind.
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, expected.size)
                        os.fsync(fd)
                    raise
            finally:
                os.close(fd)
    except OSError as exc:
        raise _wrap_os_error(exc, path) from None
    return made
