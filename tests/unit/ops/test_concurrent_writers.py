"""Issue 36 item 3: pitools' in-place writers racing a Pi-like appender, with SIGKILLs.

A short run of ``scripts/stress_concurrent.py`` (``PITOOLS_RACE_TRIALS`` per writer, default 2;
``make stress`` runs 1,000): compact --apply, navigate --summarize, repair, slim and redact
--in-place while a separate process appends Pi-shaped lines by path; no Pi line may be lost or
torn, no compaction may land after a Pi line it did not plan against, every refusal is one clear
line. The full-disk run needs root on Linux (a tmpfs); it is skipped elsewhere.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests import support

TRIALS = int(os.environ.get("PITOOLS_RACE_TRIALS", "2"))
race = support.load_script("stress_concurrent")


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(tmp_path / "no-agent"))
    env.pop("PITOOLS_DEBUG", None)
    return env


@pytest.mark.slow  # ~4 s per writer on a busy 2-core machine (subprocesses)
@pytest.mark.parametrize("which", race.WRITERS)
def test_no_pi_line_is_lost_or_torn(which: str, tmp_path: Path) -> None:
    (racer,) = race.build_racers(which, 3, False)
    result = race.stress(racer, TRIALS, random.Random(which), tmp_path, _env(tmp_path), 0.3, False)
    assert result["violations"] == [], result


def test_the_checks_catch_a_lost_a_torn_and_a_stale_line(tmp_path: Path) -> None:
    """The rules themselves: each broken file below is reported (so a clean run means something)."""
    (racer,) = race.build_racers("compact", 3, False)
    pi = [b'{"type":"message","id":"p1","parentId":"x"}']
    original = racer.original
    lost = race.check(racer, original, pi, 0, "", tmp_path)
    torn = race.check(racer, original + pi[0] + b"\n" + b'{"type":"comp\n', pi, 0, "", tmp_path)
    stale_line = b'{"type":"compaction","id":"c","parentId":"' + race._last_id(original).encode() + b'"}'
    stale = race.check(racer, original + pi[0] + b"\n" + stale_line + b"\n", pi, 0, "", tmp_path)
    crash = race.check(racer, original, [], 3, "pitools: internal error", tmp_path)
    assert any("is in the file 0 times" in b for b in lost)
    assert any("torn line" in b for b in torn)
    assert any("stale append" in b for b in stale)
    assert any("without one clear line" in b for b in crash)
    assert race.check(racer, original + pi[0] + b"\n", pi, 1, "pitools: s: refused\n", tmp_path) == []


def _need_tmpfs(tmp_path: Path) -> None:
    """Skip unless this process may mount a small tmpfs (root on Linux, and permitted here)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("needs root on Linux to mount a tmpfs")
    probe = tmp_path / "probe"
    probe.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs is not permitted here")
    subprocess.run(["umount", "-l", str(probe)], check=False)


@pytest.mark.slow
def test_racing_on_a_full_disk(tmp_path: Path) -> None:
    _need_tmpfs(tmp_path)
    with race.full_disk(tmp_path) as work:
        (racer,) = race.build_racers("compact", 3, True)
        result = race.stress(racer, TRIALS + 2, random.Random(7), work, _env(tmp_path), 0.2, True)
        assert result["violations"] == [], result


def test_a_backup_that_does_not_fit_leaves_nothing_behind(tmp_path: Path) -> None:
    """Issue 36 item 2: on a full disk the backup copy fails; neither a partial nor a full-size
    backup (nor its temp file) may stay, and the session is as it was."""
    _need_tmpfs(tmp_path)
    (racer,) = race.build_racers("compact", 3, False)
    with race.full_disk(tmp_path) as work:
        folder = work / "trial"
        folder.mkdir()
        session = folder / "session.jsonl"
        session.write_bytes(racer.original)
        race._fill(folder, 8192)  # room for a line, not for a copy of the session
        argv = [*race.stress_crash.pitools_argv(), *(a.replace("{f}", str(session)) for a in racer.args)]
        proc = subprocess.run(argv, capture_output=True, text=True, env=_env(tmp_path), timeout=120, check=False)
        assert proc.returncode == 1, proc.stderr
        assert "cannot write the backup copy (No space left on device); nothing was changed" in proc.stderr
        assert session.read_bytes() == racer.original
        assert sorted(p.name for p in folder.iterdir()) == ["session.jsonl"]
