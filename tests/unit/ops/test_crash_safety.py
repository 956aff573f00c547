"""Writers never leave a torn session: SIGKILL at random moments, a full disk, a read-only folder.

The SIGKILL trials are a short run of ``scripts/stress_crash.py`` (``PITOOLS_CRASH_TRIALS`` per
writer, default 3; the script itself runs 1,000). Disk-full and read-only cases use a real tiny
tmpfs when this process may mount one (root on Linux; chmod does not stop root), and a simulated
ENOSPC (monkeypatched ``os.write``/``os.fsync``) everywhere.
"""

from __future__ import annotations

import errno
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests import support

ROOT = support.ROOT
TRIALS = int(os.environ.get("PITOOLS_CRASH_TRIALS", "3"))
COMPACT = ["--apply", "--model", "builtin", "--keep-recent-tokens", "2000", "--no-config", "--format", "json"]


stress_crash = support.load_script("stress_crash")


@pytest.fixture(scope="module")
def v1_bytes() -> bytes:
    return bytes(stress_crash.v1_session(0.04, 5))


@pytest.fixture(scope="module")
def v3_bytes() -> bytes:
    return bytes(stress_crash.v3_session(0.04, 6))


def _pitools(*args: str) -> tuple[int, str]:
    import warnings

    from tests.support import PITOOLS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # click 8.5's get_binary_stream
        result = CliRunner().invoke(PITOOLS, list(args), catch_exceptions=False, env={"PITOOLS_DEBUG": None})
    return result.exit_code, result.stderr


def _assert_clean_refusal(rc: int, err: str) -> None:
    assert rc == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pitools: "), err


# -- SIGKILL -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["migrate", "compact", "repair", "slim"])
def test_sigkill_never_tears_the_file(which: str, tmp_path: Path) -> None:
    (writer,) = stress_crash.build_writers(0.04, 3, False, which)
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(tmp_path / "no-agent"))
    env.pop("PITOOLS_DEBUG", None)
    result = stress_crash.stress(writer, TRIALS, random.Random(which), tmp_path, env)
    assert result["violations"] == [], result
    assert result["writerFailures"] == {}, result


@pytest.mark.slow
def test_stress_script_runs(tmp_path: Path) -> None:
    """The script's own entry point (one trial per writer), as `make stress`-style runs use it."""
    out = tmp_path / "summary.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "stress_crash.py"),
            "--trials",
            "1",
            "--size-mb",
            "0.02",
            "--json",
            str(out),
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert out.exists()


# -- disk full, simulated ---------------------------------------------------------------------------


def test_migrate_in_place_disk_full_simulated(tmp_path: Path, v1_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(v1_bytes)
    real_fsync = os.fsync

    def full(fd: int) -> None:
        if Path(f"/proc/self/fd/{fd}").resolve().name.endswith(".pitools-tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    rc, err = _pitools("migrate", str(target), "--in-place", "--no-backup")
    _assert_clean_refusal(rc, err)
    assert target.read_bytes() == v1_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_compact_apply_disk_full_simulated(tmp_path: Path, v3_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(v3_bytes)

    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    rc, err = _pitools("compact", str(target), *COMPACT, "--no-backup")
    _assert_clean_refusal(rc, err)
    assert target.read_bytes() == v3_bytes


def test_backup_disk_full_simulated(tmp_path: Path, v1_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    target = tmp_path / "s.jsonl"
    target.write_bytes(v1_bytes)

    def full(src: Any, dst: Any, length: int = 0) -> None:
        dst.write(src.read(100))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copyfileobj", full)
    rc, err = _pitools("migrate", str(target), "--in-place")
    assert target.read_bytes() == v1_bytes
    _assert_clean_refusal(rc, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


# -- a real tiny filesystem -------------------------------------------------------------------------------


def _mount(where: Path, *options: str) -> bool:
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs mounted for this test (skipped where mounting is not allowed)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("needs root on Linux to mount a tmpfs")
    where = tmp_path / "mnt"
    where.mkdir()
    if not _mount(where, "size=256k"):
        pytest.skip("mounting a tmpfs is not permitted here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path, leave: int) -> None:
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    (folder / "filler").write_bytes(b"\0" * max(0, free - leave))


def _remount_ro(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)


def test_migrate_in_place_on_a_full_disk(tiny_fs: Path, v1_bytes: bytes) -> None:
    target = tiny_fs / "s.jsonl"
    target.write_bytes(v1_bytes)
    _fill(tiny_fs, 8192)
    rc, err = _pitools("migrate", str(target), "--in-place", "--no-backup")
    _assert_clean_refusal(rc, err)
    assert target.read_bytes() == v1_bytes
    assert sorted(p.name for p in tiny_fs.iterdir()) == ["filler", "s.jsonl"]


def test_compact_apply_on_a_full_disk(tiny_fs: Path, v3_bytes: bytes) -> None:
    target = tiny_fs / "s.jsonl"
    target.write_bytes(v3_bytes)
    _fill(tiny_fs, 2048)
    rc, err = _pitools("compact", str(target), *COMPACT, "--no-backup")
    assert target.read_bytes() == v3_bytes
    _assert_clean_refusal(rc, err)


@pytest.mark.parametrize("which", ["migrate", "compact"])
def test_writers_in_a_read_only_folder(tiny_fs: Path, v1_bytes: bytes, v3_bytes: bytes, which: str) -> None:
    target = tiny_fs / "s.jsonl"
    original = v1_bytes if which == "migrate" else v3_bytes
    target.write_bytes(original)
    _remount_ro(tiny_fs)
    args = ["migrate", str(target), "--in-place"] if which == "migrate" else ["compact", str(target), *COMPACT]
    rc, err = _pitools(*args, "--no-backup")
    _assert_clean_refusal(rc, err)
    assert target.read_bytes() == original


@pytest.mark.parametrize("which", ["migrate", "compact"])
def test_writers_with_backup_in_a_read_only_folder(tiny_fs: Path, v1_bytes: bytes, v3_bytes: bytes, which: str) -> None:
    target = tiny_fs / "s.jsonl"
    original = v1_bytes if which == "migrate" else v3_bytes
    target.write_bytes(original)
    _remount_ro(tiny_fs)
    args = ["migrate", str(target), "--in-place"] if which == "migrate" else ["compact", str(target), *COMPACT]
    rc, err = _pitools(*args)
    assert target.read_bytes() == original
    _assert_clean_refusal(rc, err)


@pytest.mark.parametrize("backup", [True, False])
def test_repair_in_a_read_only_folder(tiny_fs: Path, v3_bytes: bytes, backup: bool) -> None:
    target = tiny_fs / "s.jsonl"
    damaged = v3_bytes.replace(b"\n", b"\r\n")  # something to repair
    target.write_bytes(damaged)
    _remount_ro(tiny_fs)
    rc, err = _pitools("repair", str(target), "--in-place", *([] if backup else ["--no-backup"]))
    assert target.read_bytes() == damaged
    _assert_clean_refusal(rc, err)
