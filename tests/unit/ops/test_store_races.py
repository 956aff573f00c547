"""Issue 36 items 1 and 2: pitools writing into a session Pi may be appending to right now.

Pi takes no lock (``appendFileSync`` by path), so a line of Pi's can land at any moment: while the
backup is copied, between pitools' last check and its write, while its write fails on a full
disk, or between a rewrite's last check and its rename. Each test puts Pi's line exactly there.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pitools import store
from pitools.errors import PitoolsError, SessionChangedError

ORIGINAL = b'{"type":"session","version":3,"id":"S"}\n{"type":"message","id":"a","parentId":null}\n'
OURS = b'{"type":"compaction","id":"c","parentId":"a","summary":"s"}\n'
PIS = b'{"type":"message","id":"pi","parentId":"a","message":{"role":"user","content":"newest prompt"}}\n'


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(ORIGINAL)
    return path


def _pi_appends(path: Path, line: bytes = PIS) -> None:
    """What Pi's appendFileSync does: open by path, append, close."""
    with open(path, "ab") as fh:
        fh.write(line)


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bak-*"))


def _temps(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f".{path.name}.*"))


# -- item 1: the stale-file race -----------------------------------------------------------------


def test_a_line_pi_appends_while_the_backup_is_copied_is_refused(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backup of a big file takes seconds: Pi's line written meanwhile must not end up
    before pitools' entry (pitools' entry would become Pi's leaf, the newest prompt abandoned)."""
    real_copy = shutil.copyfileobj

    def slow_copy(src: Any, dst: Any, length: int = 0) -> None:
        real_copy(src, dst, length)
        _pi_appends(session)  # lands while pitools is still busy with the backup

    before = store.stamp(session)
    monkeypatch.setattr(shutil, "copyfileobj", slow_copy)
    with pytest.raises(SessionChangedError, match=f"{len(PIS)} bytes were appended since pitools read it"):
        store.append_lines(session, [OURS], expected=before, backup=True)
    assert session.read_bytes() == ORIGINAL + PIS
    assert _backups(session) == [] and _temps(session) == []


def test_a_line_pi_appends_right_before_the_final_check_is_refused(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = store.stamp(session)
    monkeypatch.setattr(store, "_before_final_check", lambda: _pi_appends(session))
    with pytest.raises(SessionChangedError, match="nothing was written"):
        store.append_lines(session, [OURS], expected=before, backup=True)
    assert session.read_bytes() == ORIGINAL + PIS
    assert _backups(session) == []


def test_a_same_size_rewrite_of_the_tail_is_refused(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Size and mtime alone are not proof (an mtime can be put back): the tail bytes decide."""
    before = store.stamp(session)

    def rewrite() -> None:
        st = session.stat()
        session.write_bytes(ORIGINAL.replace(b'"a"', b'"b"'))
        os.utime(session, ns=(st.st_atime_ns, st.st_mtime_ns))

    monkeypatch.setattr(store, "_before_final_check", rewrite)
    with pytest.raises(SessionChangedError):
        store.append_lines(session, [OURS], expected=before, backup=False)
    assert OURS not in session.read_bytes()


def test_the_backup_holds_exactly_the_bytes_planned_against(session: Path) -> None:
    """The backup is the stamped prefix, hash-checked: Pi's later line is not in it (the final
    check refuses that), and a rewritten prefix is refused with no backup left."""
    before = store.stamp(session)
    _pi_appends(session)
    made = store.make_backup(session, expected=before)
    assert made.read_bytes() == ORIGINAL
    made.unlink()
    session.write_bytes(ORIGINAL.replace(b'"a"', b'"b"') + PIS)
    with pytest.raises(SessionChangedError):
        store.make_backup(session, expected=before)
    assert _backups(session) == [] and _temps(session) == []


# -- item 2: a failed write never removes another writer's line -------------------------------------


def test_a_failed_write_never_truncates_below_a_line_pi_appended(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pi appends just after the final check, then pitools' write fails (disk full): the old
    code truncated to the size read at planning time, removing Pi's line, and said "unchanged"."""
    monkeypatch.setattr(store, "_after_final_check", lambda: _pi_appends(session))

    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(PitoolsError) as caught:
        store.append_lines(session, [OURS], expected=store.stamp(session), backup=True)
    assert session.read_bytes() == ORIGINAL + PIS  # Pi's line kept
    msg = caught.value.message
    assert "not only pitools' partial line" in msg and "removed nothing" in msg and "unchanged" not in msg
    assert _backups(session) == []  # no full-size backup left on a full disk


def test_pitools_partial_line_then_pis_line_removes_nothing(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def partial_then_pi(fd: int, data: Any) -> int:
        n = real_write(fd, bytes(data)[:10])
        _pi_appends(session)
        return n

    monkeypatch.setattr(os, "write", partial_then_pi)
    with pytest.raises(PitoolsError, match="removed nothing"):
        store.append_lines(session, [OURS], expected=store.stamp(session), backup=False)
    assert session.read_bytes() == ORIGINAL + OURS[:10] + PIS


def test_pitools_own_partial_line_is_removed(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:10]))
    with pytest.raises(
        PitoolsError, match=r"removed its own partial line \(10 bytes\), the file is as pitools found it"
    ):
        store.append_lines(session, [OURS], expected=store.stamp(session), backup=True)
    assert session.read_bytes() == ORIGINAL
    assert _backups(session) == []


def test_a_write_that_wrote_nothing_says_so(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(PitoolsError, match="nothing was appended, the file is as pitools found it"):
        store.append_lines(session, [OURS], expected=store.stamp(session), backup=True)
    assert session.read_bytes() == ORIGINAL and _backups(session) == []


def test_terminate_writes_the_missing_newline_in_the_same_write(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session.write_bytes(ORIGINAL[:-1])
    calls: list[bytes] = []
    real_write = os.write

    def spy(fd: int, data: Any) -> int:
        calls.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", spy)
    store.append_lines(session, [OURS], expected=store.stamp(session), backup=False, terminate=True)
    assert calls == [b"\n" + OURS]
    assert session.read_bytes() == ORIGINAL + OURS


# -- whole-file rewrites: a line appended to the old file during the rename ----------------------------


def test_a_line_pi_appends_before_the_rename_is_carried_over(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pi's line lands on the old inode between pitools' last check and ``os.replace``: without
    the carry-over it vanished with the old file."""
    real_replace = os.replace

    def replace_late(src: Any, dst: Any) -> None:
        if Path(dst) == session:
            _pi_appends(session)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_late)
    rewritten = ORIGINAL.replace(b'"id":"S"', b'"id":"S2"')
    with pytest.raises(store.CarriedOver, match=r"appended 1 line\(s\) \(\d+ bytes\) while pitools replaced") as c:
        store.atomic_replace(session, [rewritten], expected=store.stamp(session), backup=True)
    assert "the file as pitools read it is backed up at" in c.value.message
    assert session.read_bytes() == rewritten + PIS
    backups = _backups(session)
    assert len(backups) == 1 and backups[0].read_bytes() == ORIGINAL
    assert _temps(session) == []


def test_a_line_pi_appends_before_the_final_rewrite_check_is_refused(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = store.stamp(session)

    def chunks() -> Any:
        yield ORIGINAL
        _pi_appends(session)  # while pitools writes its temp file

    with pytest.raises(SessionChangedError):
        store.atomic_replace(session, chunks(), expected=before, backup=True)
    assert session.read_bytes() == ORIGINAL + PIS
    assert _backups(session) == [] and _temps(session) == []


def test_a_private_backup_is_owner_only(session: Path) -> None:
    session.chmod(0o644)
    made = store.atomic_replace(session, [ORIGINAL], expected=store.stamp(session), private_backup=True)
    assert made is not None and (made.stat().st_mode & 0o777) == 0o600
    assert (session.stat().st_mode & 0o777) == 0o644


def test_a_line_still_landing_during_the_carry_over_is_carried_too(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Pi that opened the old file before the rename can write twice after it."""
    real_replace, late = os.replace, {}
    second = PIS.replace(b'"id":"pi"', b'"id":"pi2"')

    def replace_late(src: Any, dst: Any) -> None:
        if Path(dst) == session:
            late["fd"] = os.open(session, os.O_WRONLY | os.O_APPEND)  # Pi's open, before the rename
            os.write(late["fd"], PIS)
        real_replace(src, dst)

    def pi_writes_again(_seconds: float) -> None:
        if "fd" in late:
            os.write(late["fd"], second)
            os.close(late.pop("fd"))

    monkeypatch.setattr(os, "replace", replace_late)
    monkeypatch.setattr(store.time, "sleep", pi_writes_again)
    with pytest.raises(store.CarriedOver, match=r"appended 2 line\(s\)"):
        store.atomic_replace(session, [ORIGINAL], expected=store.stamp(session), backup=False)
    assert session.read_bytes() == ORIGINAL + PIS + second
