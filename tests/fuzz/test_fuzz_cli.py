"""The CLI promise on bad input: every read-only command exits 0 or 1 with at most one error line.

In-process runs (CliRunner, strict UTF-8 stdout like a real pipe, a SIGALRM watchdog) carry the
volume; a sample also runs as real subprocesses (``python -m pitools``, with a timeout), which is
what a user sees, start-up and stream encodings included.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import support
from tests.fuzz.support import (
    CLI_EXAMPLES,
    CLI_TIMEOUT,
    SEED,
    SUBPROCESS_EXAMPLES,
    check_cli,
    hypothesis_settings,
)

SEEDS = support.seed_sessions(max_lines=25)
SEED_NAMES = [name for name, _ in SEEDS]


def test_the_invocations_cover_the_issue() -> None:
    """Whatever exists of inspect/validate/migrate --check/context/tree/branches/compact --dry-run runs."""
    invocations = support.cli_invocations("f.jsonl")
    names = {args[0] for args in invocations}
    assert {"inspect", "context", "migrate"} <= names
    context_formats = {args[3] for args in invocations if args[0] == "context"}
    assert {"human", "json", "markdown"} <= context_formats


@hypothesis_settings(CLI_EXAMPLES)
@given(name=st.sampled_from(SEED_NAMES), seed=st.integers(0, 2**32 - 1))
def test_cli_on_mutated_golden_sessions(name: str, seed: int, scratch: Path) -> None:
    rng = random.Random(seed)
    check_cli(support.mutate_lines(rng, dict(SEEDS)[name]), scratch, "mutated")


@hypothesis_settings(CLI_EXAMPLES)
@given(data=st.binary(max_size=400))
def test_cli_on_arbitrary_bytes(data: bytes, scratch: Path) -> None:
    check_cli(data, scratch, "bytes")


def test_cli_on_golden_sessions(scratch: Path) -> None:
    """Unmutated golden sessions, full size (all of them under ``make fuzz``, a sample otherwise)."""
    paths = support.full_golden()
    if CLI_EXAMPLES < 100:
        paths = random.Random(SEED).sample(paths, min(3, len(paths)))
    for path in paths:
        check_cli(path.read_bytes(), scratch, "golden")


@pytest.mark.slow
def test_cli_subprocess_sample(tmp_path: Path) -> None:
    """Real processes: exit 0/1, no traceback, one error line, within the time limit."""
    rng = random.Random(SEED + 1)
    env = {k: v for k, v in os.environ.items() if k != "PITOOLS_DEBUG"}
    env["PYTHONIOENCODING"] = "utf-8:strict"
    target = tmp_path / "session.jsonl"
    for _ in range(SUBPROCESS_EXAMPLES):
        _name, lines = rng.choice(SEEDS)
        data = support.mutate_lines(rng, lines)
        target.write_bytes(data)
        for args in support.cli_invocations(str(target)):
            support.STATS.runs["subprocess"] += 1
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "pitools", *args],
                    capture_output=True,
                    timeout=CLI_TIMEOUT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                saved = support.save_crash("subprocess-hang", data, f"pitools {' '.join(args)}")
                raise AssertionError(f"`pitools {args[0]}` hung on {saved}") from None
            err = proc.stderr.decode("utf-8", "replace")
            problem = support.outcome_problem(proc.returncode, err)
            if problem is None:
                continue
            debug = subprocess.run(
                [sys.executable, "-m", "pitools", "--debug", *args],
                capture_output=True,
                timeout=CLI_TIMEOUT,
                env=env,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            err += "\n" + debug.stderr.decode("utf-8", "replace")
            bug = support.known_bug(err)
            if bug is not None:
                support.STATS.known[bug] += 1
                continue
            saved = support.save_crash("subprocess", data, f"pitools {' '.join(args)}\nexit {proc.returncode}\n{err}")
            raise AssertionError(f"`pitools {' '.join(args)}` on {saved}: {problem}\n{err[-2000:]}")
