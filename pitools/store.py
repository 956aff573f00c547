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
import errno
import hashlib
import os
import shutil
import stat as stat_mod
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pitools.errors import PitoolsError, SessionChangedError

_CHUNK = 1 << 20
_TMP_SUFFIX = ".pitools-tmp"
#: A temp file without a process id in its name (older pitools) counts as stale after this long.
_STALE_AFTER_S = 3600

#: Test hook: called inside :func:`append_line` with the lock held, after the final check and
#: before the write (None in production).
_after_final_check: Callable[[], None] | None = None


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
        if not stat_mod.S_ISREG(st.st_mode):
            # Every writer stamps first: a pipe or a device (/dev/zero) is refused before any read.
            raise PitoolsError(
                "not a regular file (a pipe, device or socket); pitools only rewrites regular files",
                path=os.fspath(path),
            )
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            last = chunk[-1:]
    return FileStamp(st.st_size, st.st_mtime_ns, h.hexdigest(), last in (b"", b"\n"))


def read_stamped(path: str | os.PathLike[str]) -> tuple[bytes, FileStamp]:
    """The file's bytes and the stamp of exactly those bytes (one read, so they cannot disagree)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    stamp_ = FileStamp(len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest(), data[-1:] in (b"", b"\n"))
    return data, stamp_


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
    """Copy ``path`` next to itself (fsynced) and return the copy's path.

    The copy is written under a temp name and published under its backup name only once complete,
    so a run killed while copying never leaves a truncated file that looks like a backup (the
    next write of ``path`` removes the temp, as for any other temp file of ours).
    """
    source = Path(path)
    target = backup_path(path)
    tmp: Path | None = None
    try:
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "File exists")
        clean_stale_temps(source)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{source.name}.pid{os.getpid()}.", suffix=_TMP_SUFFIX, dir=target.parent
        )
        tmp = Path(tmp_name)
        with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst, _CHUNK)
            dst.flush()
            os.fsync(dst.fileno())
        shutil.copymode(path, tmp)
        try:
            _publish_new(tmp, target)
        except PitoolsError:  # the name was taken meanwhile: never replace another backup
            raise FileExistsError(errno.EEXIST, "File exists") from None
    except OSError as exc:
        if tmp is not None:  # never delete a file this call did not create
            with contextlib.suppress(OSError):
                tmp.unlink()
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


def _exists_error(path: str | os.PathLike[str]) -> PitoolsError:
    return PitoolsError("output file already exists; choose another path", path=os.fspath(path))


def check_new_target(path: str | os.PathLike[str]) -> None:
    """Refuse early what :func:`write_new` would refuse at the end: an existing file or a
    directory at ``path``, or a folder that does not exist. Commands call it before paid work
    (a model request); :func:`write_new` still decides for good when it publishes."""
    target = Path(path)
    if target.is_dir():
        raise PitoolsError("output is a directory, not a file", path=os.fspath(path))
    if os.path.lexists(target):
        raise _exists_error(path)
    folder = target.parent
    if not folder.is_dir():
        raise PitoolsError(f"cannot write: the folder {os.fspath(folder)} does not exist", path=os.fspath(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PitoolsError(f"cannot write: the folder {os.fspath(folder)} is not writable", path=os.fspath(path))


def check_writable(path: str | os.PathLike[str]) -> None:
    """Refuse early what an in-place write of ``path`` would refuse (not a regular file, read-only)."""
    _writable_target(path)


def write_new(path: str | os.PathLike[str], chunks: Iterable[bytes], *, overwrite: bool = False) -> None:
    """Write a new file atomically; never replaces an existing one (even one created meanwhile)
    unless ``overwrite``.

    The complete temp file is published with ``link`` (or ``renameat2(RENAME_NOREPLACE)`` where
    hard links are not supported), which fails instead of replacing a file that appeared after
    the first check. The file gets the mode Pi's own writes get: 0666 minus the umask (0644
    typically).
    """
    target = Path(path)
    if target.is_dir():
        raise PitoolsError("output is a directory, not a file", path=os.fspath(path))
    if os.path.lexists(target) and not overwrite:  # early, before writing anything (the publish step decides)
        raise _exists_error(path)
    _write_then_rename(target, chunks, expected=None, source=None, replace=overwrite)


def _rename_noreplace(src: Path, dst: Path) -> None:
    """``renameat2(src, dst, RENAME_NOREPLACE)`` through libc; OSError when unavailable."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    try:
        renameat2 = libc.renameat2
    except AttributeError:
        raise OSError(errno.ENOSYS, "renameat2 is not available") from None
    at_fdcwd, rename_noreplace = -100, 1
    if renameat2(at_fdcwd, os.fsencode(src), at_fdcwd, os.fsencode(dst), rename_noreplace) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _publish_new(tmp: Path, target: Path) -> None:
    """Give the finished temp file its final name only if that name is free."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise _exists_error(target) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS, errno.EXDEV):
            raise
        try:
            _rename_noreplace(tmp, target)
        except FileExistsError:
            raise _exists_error(target) from None
        except OSError as exc2:
            if exc2.errno == errno.EEXIST:
                raise _exists_error(target) from None
            raise PitoolsError(
                "this file system supports neither hard links nor no-replace renames, so pitools cannot "
                "publish a new file without risking to replace one; write it to another folder",
                path=os.fspath(target),
            ) from None
        return
    os.unlink(tmp)


def _writable_target(path: str | os.PathLike[str]) -> Path:
    """The file a rewrite must change: a symlink is followed (as Pi's writeFileSync does), and a
    file whose own mode forbids writing (``0444``) is refused even where the folder is writable."""
    real = Path(os.path.realpath(path))
    try:
        st = os.stat(real)
    except OSError as exc:
        raise PitoolsError(f"cannot write: {exc.strerror or exc}", path=os.fspath(path)) from None
    if not stat_mod.S_ISREG(st.st_mode):
        raise PitoolsError("not a regular file; pitools only rewrites regular files", path=os.fspath(path))
    if not st.st_mode & 0o222:
        raise PitoolsError(
            f"the file is read-only (mode {stat_mod.S_IMODE(st.st_mode):04o}); pitools respects that: "
            "make it writable (chmod u+w) to change it; nothing was written",
            path=os.fspath(path),
        )
    return real


def clean_stale_temps(target: str | os.PathLike[str]) -> list[str]:
    """Remove temp files pitools left next to ``target`` when it was killed mid-write.

    Only names pitools makes (``.<name>.pid<N>.<random>.pitools-tmp``) of a process that is gone,
    owned by this user, regular files; an older name without a pid when it is over an hour old.
    """
    folder = Path(target).parent if str(Path(target).parent) else Path(".")
    prefix = f".{Path(target).name}."
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(_TMP_SUFFIX)):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat_mod.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            continue
        middle = name[len(prefix) : -len(_TMP_SUFFIX)]
        if middle.startswith("pid") and middle[3:].split(".", 1)[0].isdigit():
            pid = int(middle[3:].split(".", 1)[0])
            if pid == os.getpid() or _alive(pid):
                continue
        elif time.time() - st.st_mtime < _STALE_AFTER_S:
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def atomic_replace(
    path: str | os.PathLike[str], chunks: Iterable[bytes], *, expected: FileStamp, backup: bool = True
) -> Path | None:
    """Replace ``path`` with ``chunks`` atomically; returns the backup path, if one was made."""
    target = _writable_target(path)
    made = make_backup(target) if backup else None
    try:
        _write_then_rename(target, chunks, expected=expected, source=target)
    except BaseException:
        if made is not None:
            with contextlib.suppress(OSError):
                made.unlink()
        raise
    return made


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_then_rename(
    target: Path,
    chunks: Iterable[bytes],
    *,
    expected: FileStamp | None,
    source: Path | None,
    replace: bool = False,
) -> None:
    folder = target.parent if str(target.parent) else Path(".")
    clean_stale_temps(target)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.pid{os.getpid()}.", suffix=_TMP_SUFFIX, dir=folder)
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
        else:
            # mkstemp creates 0600; a new session or export gets what Pi's writes get.
            os.chmod(tmp, 0o666 & ~_umask())
        if source is not None:
            with _locked(source):
                if expected is not None:
                    check_unchanged(source, expected)
                os.replace(tmp, target)
        elif replace:
            os.replace(tmp, target)
        else:
            _publish_new(tmp, target)
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
    return append_lines(path, [line], expected=expected, backup=backup)


def append_lines(
    path: str | os.PathLike[str], lines: Sequence[bytes], *, expected: FileStamp, backup: bool = True
) -> Path | None:
    """Append complete lines (each ending with ``\\n``) with a single fsynced write: a reader
    sees all of them or none (Pi appends a branch summary and its label in two writes)."""
    if not lines or any(not ln.endswith(b"\n") or b"\n" in ln[:-1] for ln in lines):
        raise ValueError("append_lines takes newline-terminated lines, one per item")
    line = b"".join(lines)
    if not expected.ends_with_newline:
        raise PitoolsError(
            "the file's last line has no newline (torn write?); appending would fuse two lines. "
            "Repair it first (e.g. `pitools migrate --in-place` rewrites it terminated) and retry",
            path=os.fspath(path),
        )
    path = _writable_target(path)
    made: Path | None = None
    try:
        with _locked(path):
            check_unchanged(path, expected)
            if _after_final_check is not None:
                _after_final_check()
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


# -- derived outputs (dataset tables, manifests) ---------------------------------------------------


@contextlib.contextmanager
def replace_output(path: str | os.PathLike[str]) -> Iterator[str]:
    """Write a derived output file (not a session) in place of any older version, atomically.

    Yields a temporary path in the target's folder for the caller (or a library such as a Parquet
    writer) to fill; on success it is fsynced and renamed over ``path``, on failure removed. Used
    for files pitools itself generates and regenerates, never for session files.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # The pid in the name lets the next write of this output remove what a killed run left
        # (a partial Parquet or JSONL table can be as big as the session it came from).
        clean_stale_temps(target)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.pid{os.getpid()}.", suffix=_TMP_SUFFIX, dir=target.parent
        )
        os.close(fd)
    except OSError as exc:
        raise _wrap_os_error(exc, target) from None
    try:
        yield tmp_name
        fd = os.open(tmp_name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, target)
        _fsync_dir(target.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise _wrap_os_error(exc, target) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def remove_output(path: str | os.PathLike[str]) -> None:
    """Delete a derived output file that is no longer wanted (missing is fine)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def remove_empty_dir(path: str | os.PathLike[str]) -> None:
    """Remove a derived-output folder if it is empty (a partition whose last file went)."""
    with contextlib.suppress(OSError):
        os.rmdir(path)
