"""The only module that writes session files.

Two kinds of write, both refusing when the file changed since pitools read it:

* :func:`atomic_replace` — whole-file rewrite (``migrate --in-place``): temp file in the same
  folder, fsync, re-check, ``os.replace``, fsync of the folder. A crash leaves either the
  original or the complete new file.
* :func:`append_lines` — one fsynced ``write`` of complete lines (``compact --apply``,
  ``navigate --summarize``), after checking the file still ends where and how pitools read it.

A backup copy (``<file>.bak-<UTC time>``) is kept unless the caller says not to.

Pi takes no lock: it appends each entry with ``appendFileSync`` by path, at any moment. So every
writer here takes its backup *before* its last check, makes that check (size, mtime and the tail
bytes it planned against, on the descriptor it writes through) right before the one ``write`` or
``rename``, and after a failure removes only its own partial line, never bytes past the size it
saw just before writing. A whole-file rewrite keeps the old file open and carries over anything
appended to it between that check and the rename (and says so).
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
from typing import BinaryIO

from pitools.errors import PitoolsError, SessionChangedError

_CHUNK = 1 << 20
_TMP_SUFFIX = ".pitools-tmp"
#: A temp file without a process id in its name (older pitools) counts as stale after this long.
_STALE_AFTER_S = 3600

#: How many of the file's last bytes a stamp keeps, to re-check right before a write.
TAIL_BYTES = 4096

#: Test hooks (None in production): ``_after_final_check`` is called inside :func:`append_lines`
#: with the lock held, after the final check and before the write; ``_before_final_check`` just
#: before that check (after the backup), where a concurrent appender is most likely to land.
_after_final_check: Callable[[], None] | None = None
_before_final_check: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What the file looked like when read: size, mtime, a content hash and its last bytes."""

    size: int
    mtime_ns: int
    sha256: str
    ends_with_newline: bool
    #: The last :data:`TAIL_BYTES` bytes (empty when unknown: then only size and mtime are
    #: compared right before the write, after the whole hash was checked).
    tail: bytes = b""


def stamp(path: str | os.PathLike[str]) -> FileStamp:
    """Hash the file once (streaming) so later writes can prove nothing changed."""
    h = hashlib.sha256()
    tail = b""
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
            tail = (tail + chunk)[-TAIL_BYTES:]
    return FileStamp(st.st_size, st.st_mtime_ns, h.hexdigest(), tail[-1:] in (b"", b"\n"), tail)


def read_stamped(path: str | os.PathLike[str]) -> tuple[bytes, FileStamp]:
    """The file's bytes and the stamp of exactly those bytes (one read, so they cannot disagree)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    stamp_ = FileStamp(
        len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest(), data[-1:] in (b"", b"\n"), data[-TAIL_BYTES:]
    )
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


def make_backup(path: str | os.PathLike[str], *, expected: FileStamp | None = None, private: bool = False) -> Path:
    """Copy ``path`` next to itself (fsynced) and return the copy's path.

    The copy is written under a temp name and published under its backup name only once complete,
    so a run killed while copying never leaves a truncated file that looks like a backup (the
    next write of ``path`` removes the temp, as for any other temp file of ours); a copy that
    fails (a full disk) is removed, so nothing backup-sized stays behind.

    With ``expected``, exactly its ``size`` bytes are copied and hashed on the way: the backup is
    then proven to be the bytes pitools planned against, or :class:`SessionChangedError` is
    raised and no backup is left. ``private`` makes the copy owner-only (``0600``: a redacted
    file's backup still holds every secret) instead of the file's own mode.
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
            if expected is None:
                shutil.copyfileobj(src, dst, _CHUNK)
            else:
                reader = _HashingReader(src, expected.size)
                shutil.copyfileobj(reader, dst, _CHUNK)
                if reader.left or reader.digest.hexdigest() != expected.sha256:
                    raise SessionChangedError(
                        "the file changed since pitools read it (another process is writing to it?); "
                        "nothing was written",
                        path=os.fspath(path),
                    )
            dst.flush()
            os.fsync(dst.fileno())
        if private:
            os.chmod(tmp, 0o600)
        else:
            shutil.copymode(path, tmp)
        try:
            _publish_new(tmp, target)
        except PitoolsError:  # the name was taken meanwhile: never replace another backup
            raise FileExistsError(errno.EEXIST, "File exists") from None
    except SessionChangedError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
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


class _HashingReader:
    """Reads at most ``left`` bytes of ``fh``, hashing them on the way (for ``copyfileobj``)."""

    def __init__(self, fh: BinaryIO, left: int) -> None:
        self.fh, self.left, self.digest = fh, left, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(self.left if n < 0 else min(n, self.left))
        self.digest.update(data)
        self.left -= len(data)
        return data


def _changed_error(path: str | os.PathLike[str], expected: FileStamp, size: int) -> SessionChangedError:
    if size > expected.size:
        what = (
            f"{size - expected.size:,} bytes were appended since pitools read it "
            "(Pi or another process is writing to it)"
        )
    else:
        what = "the file changed since pitools read it (another process is writing to it?)"
    return SessionChangedError(f"{what}; nothing was written, run the command again", path=os.fspath(path))


def _final_check(fd: int, path: str | os.PathLike[str], expected: FileStamp) -> int:
    """The last check before a write, on the descriptor the write goes through: the size, the
    mtime and the tail bytes pitools planned against. Cheap (one fstat, one pread), so the
    window between it and the write is as short as the file system allows. Returns the size."""
    st = os.fstat(fd)
    if st.st_size != expected.size or st.st_mtime_ns != expected.mtime_ns:
        raise _changed_error(path, expected, st.st_size)
    if expected.tail:
        n = len(expected.tail)
        if os.pread(fd, n, st.st_size - n) != expected.tail:
            raise _changed_error(path, expected, st.st_size)
    return st.st_size


def _discard(made: Path | None) -> None:
    if made is not None:
        with contextlib.suppress(OSError):
            made.unlink()


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _locked(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> Iterator[int]:
    """An advisory exclusive lock on the file (``flock``), where the platform has one.

    It keeps two pitools runs apart; Pi takes no lock, so the checks around it are what
    protect Pi's lines."""
    fd = os.open(path, flags)
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
    # Only raised before pitools touched the file itself (a temp file or the backup failed).
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
    path: str | os.PathLike[str],
    chunks: Iterable[bytes],
    *,
    expected: FileStamp,
    backup: bool = True,
    private_backup: bool = False,
) -> Path | None:
    """Replace ``path`` with ``chunks`` atomically; returns the backup path, if one was made.

    The backup (``private_backup``: owner-only) is a hash-checked copy of the stamped bytes,
    taken first. Lines another process appends to the old file after the final check and before
    the rename are carried over to the end of the new file, unchanged, and reported as a
    :class:`SessionChangedError` after the write (see :func:`_carry_over`).
    """
    target = _writable_target(path)
    made = make_backup(target, expected=expected, private=private_backup) if backup else None
    try:
        _write_then_rename(target, chunks, expected=expected, source=target)
    except CarriedOver as exc:
        if made is not None:
            exc.message += f"; the file as pitools read it is backed up at {made}"
        raise
    except BaseException:
        _discard(made)
        raise
    return made


class CarriedOver(SessionChangedError):
    """The rewrite is done, but another process appended to the old file while it was renamed:
    those bytes were carried over unchanged to the end of the new file (the message says how
    many). The backup, if any, is kept."""


def _carry_over(old_fd: int, target: Path, expected: FileStamp) -> None:
    """After the rename: anything appended to the old inode (Pi opens the file by path for
    each append, so a write it started before the rename lands there) goes to the new file.

    Looked at again after each carry (a write may still be landing), a few rounds at most. What
    remains is a window of microseconds: a Pi that opened the old file before the rename and
    writes after the last look; without a lock Pi honours, it cannot be closed."""
    done, carried = expected.size, b""
    try:
        for _round in range(5):
            size = os.fstat(old_fd).st_size
            if size <= done:
                break
            extra = os.pread(old_fd, size - done, done)
            fd = os.open(target, os.O_WRONLY | os.O_APPEND)
            try:
                if os.write(fd, extra) != len(extra):
                    raise OSError(errno.ENOSPC, "short write")
                os.fsync(fd)
            finally:
                os.close(fd)
            done, carried = size, carried + extra
            time.sleep(0.001)
    except OSError as exc:
        raise CarriedOver(
            f"another process appended to the file while pitools replaced it, and carrying those bytes over to "
            f"the new file failed ({exc.strerror or exc}): they are missing from it, or it ends with part of them",
            path=os.fspath(target),
        ) from None
    if not carried:
        return
    torn = "" if carried.endswith(b"\n") else " (the last of them has no newline yet: check the end of the file)"
    lines = carried.count(b"\n")
    raise CarriedOver(
        f"another process appended {lines:,} line(s) ({len(carried):,} bytes) while pitools replaced "
        f"the file; they were carried over unchanged to the end of the new file{torn}, so they were not rewritten: "
        "run the command again",
        path=os.fspath(target),
    )


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
            with _locked(source) as old_fd:
                if expected is not None:
                    check_unchanged(source, expected)
                    _final_check(old_fd, source, expected)
                os.replace(tmp, target)
                _fsync_dir(folder)
                if expected is not None:
                    _carry_over(old_fd, target, expected)
        elif replace:
            os.replace(tmp, target)
        else:
            _publish_new(tmp, target)
        _fsync_dir(folder)
    except CarriedOver:
        raise
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
    path: str | os.PathLike[str],
    lines: Sequence[bytes],
    *,
    expected: FileStamp,
    backup: bool = True,
    terminate: bool = False,
) -> Path | None:
    """Append complete lines (each ending with ``\\n``) with a single fsynced write: a reader
    sees all of them or none (Pi appends a branch summary and its label in two writes).

    In order: the backup (a copy of exactly the stamped bytes, hash-checked), then under the
    lock the final check on the append descriptor (:func:`_final_check`), then one ``write``.
    A line another process appends at any point before that check is refused with
    :class:`SessionChangedError` and the backup is removed. ``terminate`` first writes the
    ``\\n`` the file's last line lacks, in the same write (the caller has checked that line
    is complete: Pi's loader terminates it the same way before appending); without it such a
    file is refused. A failed write removes only pitools' own partial line (see
    :func:`_after_failed_write`); a short write is never continued, since another process's
    line could already follow it.
    """
    if not lines or any(not ln.endswith(b"\n") or b"\n" in ln[:-1] for ln in lines):
        raise ValueError("append_lines takes newline-terminated lines, one per item")
    payload = b"".join(lines)
    if not expected.ends_with_newline:
        if not terminate:
            raise PitoolsError(
                "the file's last line has no newline (torn write?); appending would fuse two lines. "
                "Repair it first (e.g. `pitools repair --in-place`) and retry",
                path=os.fspath(path),
            )
        payload = b"\n" + payload
    path = _writable_target(path)
    made: Path | None = None
    try:
        if backup:
            made = make_backup(path, expected=expected)  # before the final check, never between it and the write
        else:
            check_unchanged(path, expected)  # the whole hash, once; the final check is cheap
        with _locked(path, os.O_RDWR | os.O_APPEND) as fd:
            if _before_final_check is not None:
                _before_final_check()
            size = _final_check(fd, path, expected)
            if _after_final_check is not None:
                _after_final_check()
            try:
                written = os.write(fd, payload)
                if written != len(payload):
                    raise OSError(errno.ENOSPC, f"only {written:,} of {len(payload):,} bytes were written (disk full?)")
                os.fsync(fd)
            except OSError as exc:
                raise _after_failed_write(fd, path, size, payload, exc) from None
    except BaseException:
        _discard(made)  # a refused or failed append keeps no backup (a full disk least of all)
        raise
    return made


def _after_failed_write(fd: int, path: str | os.PathLike[str], size: int, payload: bytes, exc: OSError) -> PitoolsError:
    """Undo what a failed append left, and say exactly what the file now holds.

    ``size`` is the size seen right before pitools' write: nothing at or below it is removed.
    The bytes after it are removed only when they are a prefix of pitools' own payload (its
    partial line); when anything else is there (another process appended meanwhile), nothing is
    removed and the message says so.
    """
    why = exc.strerror or str(exc)
    where = os.fspath(path)
    try:
        now = os.fstat(fd).st_size
        if now == size:
            return PitoolsError(
                f"cannot write: {why}; nothing was appended, the file is as pitools found it", path=where
            )
        extra = os.pread(fd, now - size, size) if now > size else b""
        if now > size and payload.startswith(extra) and os.fstat(fd).st_size == now:
            os.ftruncate(fd, size)
            os.fsync(fd)
            return PitoolsError(
                f"cannot write: {why}; pitools removed its own partial line ({len(extra):,} bytes), "
                "the file is as pitools found it",
                path=where,
            )
    except OSError as exc2:
        return PitoolsError(
            f"cannot write: {why}; checking the end of the file failed too ({exc2.strerror or exc2}): "
            f"it may end with part of pitools' line after byte {size:,}; run `pitools validate` on it",
            path=where,
        )
    return PitoolsError(
        f"cannot write: {why}; the file is now {now:,} bytes (it was {size:,} right before pitools wrote) and "
        "what follows is not only pitools' partial line (another process wrote too), so pitools removed "
        "nothing; run `pitools validate` on it",
        path=where,
    )


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
