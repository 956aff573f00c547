"""``pitools.store``: stamps, backups, atomic replace, one-line appends, and refusing changed files."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitools import store
from pitools.errors import PitoolsError, SessionChangedError

ORIGINAL = b'{"type":"session","version":3,"id":"S"}\n{"type":"message","id":"a","parentId":null}\n'
LINE = b'{"type":"compaction","id":"c","parentId":"a","summary":"s"}\n'


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(ORIGINAL)
    return path


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p != path)


def _touch_later(path: Path) -> None:
    """Make sure the next write gets another mtime even on coarse clocks."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 10_000_000_000))


# -- stamp -----------------------------------------------------------------------------------------


def test_stamp_records_size_mtime_hash_and_tail(session: Path) -> None:
    s = store.stamp(session)
    st = session.stat()
    assert (s.size, s.mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert s.sha256 == hashlib.sha256(ORIGINAL).hexdigest()
    assert s.ends_with_newline is True


@pytest.mark.parametrize(
    ("data", "ends"), [(b"", True), (b"{}", False), (b"{}\n{", False), (b"{}\r\n", True)], ids=repr
)
def test_stamp_tail(tmp_path: Path, data: bytes, ends: bool) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    assert store.stamp(path).ends_with_newline is ends


def test_stamp_hashes_big_files_in_chunks(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    data = (b"x" * 1023 + b"\n") * 3000  # 3 MB: several read chunks
    path.write_bytes(data)
    assert store.stamp(path).sha256 == hashlib.sha256(data).hexdigest()


def test_check_unchanged_accepts_an_untouched_file(session: Path) -> None:
    store.check_unchanged(session, store.stamp(session))


def test_check_unchanged_refuses_a_grown_file(session: Path) -> None:
    before = store.stamp(session)
    with open(session, "ab") as fh:
        fh.write(b"{}\n")
    with pytest.raises(SessionChangedError, match="changed since pitools read it"):
        store.check_unchanged(session, before)


def test_check_unchanged_refuses_same_size_other_content(session: Path) -> None:
    before = store.stamp(session)
    _touch_later(session)
    session.write_bytes(ORIGINAL.replace(b'"a"', b'"b"'))
    with pytest.raises(SessionChangedError):
        store.check_unchanged(session, before)


def test_check_unchanged_accepts_a_touched_but_identical_file(session: Path) -> None:
    before = store.stamp(session)
    _touch_later(session)
    store.check_unchanged(session, before)  # mtime differs, the hash proves nothing changed


def test_check_unchanged_refuses_same_size_rewrite_with_the_same_mtime(session: Path) -> None:
    before = store.stamp(session)
    session.write_bytes(ORIGINAL.replace(b'"a"', b'"b"'))
    os.utime(session, ns=(before.mtime_ns, before.mtime_ns))
    with pytest.raises(SessionChangedError):
        store.check_unchanged(session, before)


# -- backups ---------------------------------------------------------------------------------------


def test_make_backup_copies_bytes_and_mode(session: Path) -> None:
    session.chmod(0o640)
    backup = store.make_backup(session)
    assert re.fullmatch(r"session\.jsonl\.bak-\d{8}T\d{6}\d{6}Z", backup.name)
    assert backup.read_bytes() == ORIGINAL
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640


def test_make_backup_never_overwrites(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = session.with_name(session.name + ".bak-20260101T000000000000Z")
    fixed.write_bytes(b"older backup")
    monkeypatch.setattr(store, "backup_path", lambda path: fixed)
    with pytest.raises(PitoolsError, match="cannot write the backup copy"):
        store.make_backup(session)
    assert fixed.read_bytes() == b"older backup"


# -- atomic replace -----------------------------------------------------------------------------------


def test_atomic_replace_writes_keeps_mode_and_backs_up(session: Path) -> None:
    session.chmod(0o600)
    before = store.stamp(session)
    backup = store.atomic_replace(session, [b"new\n", b"content\n"], expected=before)
    assert session.read_bytes() == b"new\ncontent\n"
    assert stat.S_IMODE(session.stat().st_mode) == 0o600
    assert backup is not None and backup.read_bytes() == ORIGINAL
    assert _siblings(session) == [backup.name]  # no temp file left


def test_atomic_replace_without_backup(session: Path) -> None:
    assert store.atomic_replace(session, [b"x\n"], expected=store.stamp(session), backup=False) is None
    assert session.read_bytes() == b"x\n"
    assert _siblings(session) == []


def test_atomic_replace_refuses_a_changed_file(session: Path) -> None:
    before = store.stamp(session)
    with open(session, "ab") as fh:
        fh.write(b'{"type":"message","id":"late"}\n')
    changed = session.read_bytes()
    with pytest.raises(SessionChangedError):
        store.atomic_replace(session, [b"new\n"], expected=before)
    assert session.read_bytes() == changed
    assert _siblings(session) == []  # neither the temp file nor the backup stays


def test_atomic_replace_failing_producer_leaves_the_original(session: Path) -> None:
    def chunks() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("producer failed")

    with pytest.raises(RuntimeError):
        store.atomic_replace(session, chunks(), expected=store.stamp(session))
    assert session.read_bytes() == ORIGINAL
    assert _siblings(session) == []


def test_atomic_replace_disk_full_is_a_clean_error(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while writing the temp file (simulated): one clean PitoolsError, original intact."""
    real_fsync = os.fsync

    def full(fd: int) -> None:
        if os.fstat(fd).st_size > 0 and stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(PitoolsError, match="No space left on device; the original file is unchanged"):
        store.atomic_replace(session, [b"new\n"], expected=store.stamp(session), backup=False)
    assert session.read_bytes() == ORIGINAL
    assert _siblings(session) == []


def test_write_new_refuses_an_existing_file(session: Path) -> None:
    with pytest.raises(PitoolsError, match="already exists"):
        store.write_new(session, [b"x\n"])
    assert session.read_bytes() == ORIGINAL


def test_write_new_creates(tmp_path: Path) -> None:
    target = tmp_path / "new.jsonl"
    store.write_new(target, [b"a\n", b"b\n"])
    assert target.read_bytes() == b"a\nb\n"
    assert _siblings(target) == []


# -- append ------------------------------------------------------------------------------------------


def test_append_line_appends_exactly_one_line(session: Path) -> None:
    session.chmod(0o640)
    backup = store.append_line(session, LINE, expected=store.stamp(session))
    assert session.read_bytes() == ORIGINAL + LINE
    assert stat.S_IMODE(session.stat().st_mode) == 0o640
    assert backup is not None and backup.read_bytes() == ORIGINAL


def test_append_line_without_backup(session: Path) -> None:
    assert store.append_line(session, LINE, expected=store.stamp(session), backup=False) is None
    assert _siblings(session) == []


@pytest.mark.parametrize("line", [b"{}", b"{}\n{}\n", b"\n{}\n", b""], ids=repr)
def test_append_line_takes_exactly_one_terminated_line(session: Path, line: bytes) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        store.append_line(session, line, expected=store.stamp(session))
    assert session.read_bytes() == ORIGINAL


def test_append_line_refuses_a_torn_tail(session: Path) -> None:
    session.write_bytes(ORIGINAL + b'{"type":"message","id":"b"')
    torn = session.read_bytes()
    with pytest.raises(PitoolsError, match="no newline"):
        store.append_line(session, LINE, expected=store.stamp(session))
    assert session.read_bytes() == torn
    assert _siblings(session) == []


def test_append_line_refuses_a_changed_file(session: Path) -> None:
    before = store.stamp(session)
    with open(session, "ab") as fh:
        fh.write(b'{"type":"message","id":"late","parentId":"a"}\n')
    changed = session.read_bytes()
    with pytest.raises(SessionChangedError):
        store.append_line(session, LINE, expected=before, backup=False)
    assert session.read_bytes() == changed


def test_append_line_is_one_write_call(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []
    real_write = os.write

    def spy(fd: int, data: bytes | memoryview) -> int:
        calls.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", spy)
    store.append_line(session, LINE, expected=store.stamp(session), backup=False)
    assert calls == [LINE]


def test_append_line_disk_full_before_writing(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: bytes | memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(PitoolsError, match="No space left on device"):
        store.append_line(session, LINE, expected=store.stamp(session), backup=False)
    assert session.read_bytes() == ORIGINAL


def test_append_line_disk_full_after_a_partial_write(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    state = {"calls": 0}

    def partial(fd: int, data: bytes | memoryview) -> int:
        state["calls"] += 1
        if state["calls"] == 1:
            return real_write(fd, bytes(data)[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", partial)
    with pytest.raises(PitoolsError):
        store.append_line(session, LINE, expected=store.stamp(session), backup=False)
    assert session.read_bytes() == ORIGINAL


def test_a_killed_replace_output_leaves_a_temp_that_the_next_write_removes(tmp_path: Path) -> None:
    """A dataset table being written when the run is SIGKILLed: the next run of the same output
    removes the half-written temp (found by scripts/stress_crash.py --writer dataset: before, the
    temps had no pid in their names and stayed in the dataset folder for ever)."""
    import signal
    import subprocess
    import sys
    import textwrap

    target = tmp_path / "usage" / "s-1.jsonl"
    script = textwrap.dedent(
        f"""
        import time
        from pitools import store
        with store.replace_output({str(target)!r}) as tmp:
            open(tmp, "wb").write(b"half a table")
            print("writing", flush=True)
            time.sleep(60)
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    (temp,) = target.parent.iterdir()
    assert temp.name.startswith(f".s-1.jsonl.pid{proc.pid}.") and temp.name.endswith(".pitools-tmp")
    with store.replace_output(target) as tmp, open(tmp, "wb") as fh:
        fh.write(b"the table\n")
    assert _siblings(target) == [] and target.read_bytes() == b"the table\n"


def test_a_backup_killed_while_copying_never_looks_like_a_backup(session: Path) -> None:
    """SIGKILL in the middle of the backup copy: no truncated ``.bak-`` file is left for a user to
    restore from (scripts/stress_crash.py counted such "partial backups" on every writer), only a
    temp file that the next write removes."""
    import signal
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import shutil, time
        from pitools import store
        def slow_copy(src, dst, length=0):
            dst.write(src.read(10))
            dst.flush()
            print("copying", flush=True)
            time.sleep(60)
        shutil.copyfileobj = slow_copy
        store.make_backup({str(session)!r})
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "copying"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    (temp,) = _siblings(session)
    assert ".bak-" not in temp and temp.startswith(f".session.jsonl.pid{proc.pid}.") and temp.endswith(".pitools-tmp")
    assert session.read_bytes() == ORIGINAL
    made = store.atomic_replace(session, [b"new\n"], expected=store.stamp(session))
    assert made is not None and made.read_bytes() == ORIGINAL
    assert _siblings(session) == [made.name]
