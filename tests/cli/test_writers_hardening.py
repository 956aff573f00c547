"""Writers under attack (issue 12, "Writers"): each test reproduces the reported failure.

* ``-o`` must never replace a file that appears while pitools is writing;
* ``migrate --in-place`` on a symlink changes the target, not the link; a 0444 file is refused;
* temp files left by a killed writer are removed on the next write to that file.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitools import store
from pitools.errors import PitoolsError
from tests.support import golden_session

V1 = golden_session("gen-s0002_v1")


def _copy(tmp_path: Path, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(V1.read_bytes())
    return path


# -- -o publishes without replacing ----------------------------------------------------------------


def _planting(target: Path, planted: bytes) -> Iterator[bytes]:
    yield b"first chunk\n"
    target.write_bytes(planted)  # someone else creates the output meanwhile
    yield b"second chunk\n"


def test_write_new_never_replaces_a_file_created_during_the_write(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    with pytest.raises(PitoolsError, match="already exists"):
        store.write_new(target, _planting(target, b"theirs\n"))
    assert target.read_bytes() == b"theirs\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temp file left


def test_without_hard_links_the_no_replace_rename_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_link(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    target = tmp_path / "out.jsonl"
    with pytest.raises(PitoolsError, match="already exists"):
        store.write_new(target, _planting(target, b"theirs\n"))
    assert target.read_bytes() == b"theirs\n"
    fresh = tmp_path / "fresh.jsonl"
    store.write_new(fresh, [b"ours\n"])
    assert fresh.read_bytes() == b"ours\n"


def test_migrate_o_refuses_an_existing_or_dangling_output(run, tmp_path: Path) -> None:
    src = _copy(tmp_path)
    dangling = tmp_path / "link.jsonl"
    dangling.symlink_to(tmp_path / "nowhere")
    r = run("migrate", src, "-o", dangling, exit_code=1)
    assert "already exists" in r.stderr
    assert not (tmp_path / "nowhere").exists()


# -- migrate --in-place: symlinks, read-only files -------------------------------------------------


def test_in_place_on_a_symlink_migrates_the_target_and_keeps_the_link(run, tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = _copy(real_dir)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    run("migrate", link, "--in-place", "--no-backup")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert b'"version":3' in target.read_bytes()
    run("migrate", target, "--check")  # the target itself is now v3


def test_in_place_refuses_a_read_only_file(run, tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    path.chmod(0o444)
    r = run("migrate", path, "--in-place", exit_code=1)
    assert "read-only (mode 0444)" in r.stderr
    assert path.read_bytes() == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # no backup, no temp


def test_append_refuses_a_read_only_file(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"type":"session","id":"x"}\n')
    path.chmod(0o444)
    with pytest.raises(PitoolsError, match="read-only"):
        store.append_line(path, b"{}\n", expected=store.stamp(path), backup=False)
    assert path.read_bytes() == b'{"type":"session","id":"x"}\n'


# -- stale temp files --------------------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temps_of_ours_are_cleaned_on_the_next_write(run, tmp_path: Path) -> None:
    path = _copy(tmp_path)
    dead = tmp_path / f".s.jsonl.pid{_dead_pid()}.k2j3h4.pitools-tmp"
    live = tmp_path / f".s.jsonl.pid{os.getppid()}.q9w8e7.pitools-tmp"  # a live process: kept
    old_legacy = tmp_path / ".s.jsonl.abcdefgh.pitools-tmp"
    new_legacy = tmp_path / ".s.jsonl.zyxwvuts.pitools-tmp"
    other = tmp_path / ".t.jsonl.pid1.aaaa.pitools-tmp"  # another file's temp: not ours to judge
    for p in (dead, live, old_legacy, new_legacy, other):
        p.write_bytes(b"partial")
    hour_ago = time.time() - 7200
    os.utime(old_legacy, (hour_ago, hour_ago))
    run("migrate", path, "--in-place", "--no-backup")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert dead.name not in left and old_legacy.name not in left
    assert {live.name, new_legacy.name, other.name, "s.jsonl"} <= set(left)


def test_a_sigkilled_writer_leaves_a_temp_that_the_next_write_removes(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    script = textwrap.dedent(
        f"""
        import time
        from pitools import store
        path = {str(path)!r}
        before = store.stamp(path)
        def chunks():
            yield b"half a file"
            print("writing", flush=True)
            time.sleep(60)
        store.atomic_replace(path, chunks(), expected=before, backup=False)
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    temps = [p for p in tmp_path.iterdir() if p.name.endswith(".pitools-tmp")]
    assert len(temps) == 1 and temps[0].name.startswith(f".s.jsonl.pid{proc.pid}.")
    assert path.read_bytes() == V1.read_bytes()  # the original is untouched
    store.atomic_replace(path, [V1.read_bytes()], expected=store.stamp(path), backup=False)
    assert not temps[0].exists()
