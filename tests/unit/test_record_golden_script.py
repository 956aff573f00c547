"""scripts/record_golden.py finds Pi's oracle wherever the checkout is: beside the main checkout, in a
worktree (two folders down), or through the checkout's ``.pi-ref`` link; else one line and exit 1.

Each layout is a copy of the two scripts in a temporary tree, run in its own Python, so the lookup
is the script's own and nothing of this checkout's surroundings leaks in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

FIND = "import runpy; print(runpy.run_path('scripts/record_golden.py')['oracle_script']())"


def _checkout(at: Path) -> Path:
    (at / "scripts").mkdir(parents=True)
    for name in ("record_golden.py", "pi_reference.py"):
        shutil.copy(ROOT / "scripts" / name, at / "scripts" / name)
    return at


def _oracle(at: Path) -> Path:
    path = at / "shared" / "reference" / "oracle.mjs"
    path.parent.mkdir(parents=True)
    path.write_text("// the reference oracle\n")
    return path


def _find(checkout: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PI_ORACLE", "PI_REF_DIR")}
    return subprocess.run(
        [sys.executable, "-c", FIND], cwd=checkout, env={**clean, **env}, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("layout", ["main-checkout", "worktree"])
def test_the_oracle_is_found_above_the_checkout(tmp_path: Path, layout: str) -> None:
    work = tmp_path / "work"
    oracle = _oracle(work)
    checkout = _checkout(work / "main" if layout == "main-checkout" else work / "wt" / "helper")
    found = _find(checkout)
    assert (found.returncode, found.stdout.strip()) == (0, str(oracle)), found.stderr


def test_the_oracle_is_found_through_the_pi_ref_link(tmp_path: Path) -> None:
    oracle = _oracle(tmp_path / "work")
    (tmp_path / "work" / "ref").mkdir()
    checkout = _checkout(tmp_path / "elsewhere" / "pitools")
    (checkout / ".pi-ref").symlink_to(tmp_path / "work" / "ref")
    found = _find(checkout)
    assert (found.returncode, found.stdout.strip()) == (0, str(oracle)), found.stderr


def test_pi_oracle_wins_and_a_missing_oracle_is_one_line(tmp_path: Path) -> None:
    _oracle(tmp_path / "work")
    checkout = _checkout(tmp_path / "work" / "wt" / "helper")
    own = tmp_path / "mine.mjs"
    own.write_text("//\n")
    assert _find(checkout, PI_ORACLE=str(own)).stdout.strip() == str(own)
    missing = _find(checkout, PI_ORACLE=str(tmp_path / "nope.mjs"))
    assert (
        missing.returncode == 1
        and missing.stderr == f"record_golden: PI_ORACLE={tmp_path / 'nope.mjs'} is not a file\n"
    )
    alone = _checkout(tmp_path / "alone" / "pitools")
    nowhere = _find(alone)
    assert nowhere.returncode == 1 and nowhere.stdout == ""
    assert nowhere.stderr.count("\n") == 1 and "oracle" in nowhere.stderr and "PI_ORACLE" in nowhere.stderr


def test_the_script_stops_before_anything_else_without_the_oracle(tmp_path: Path) -> None:
    """``make golden`` with no oracle: one line, exit 1, nothing written or installed."""
    clean = {k: v for k, v in os.environ.items() if k != "PI_REF_DIR"}
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "record_golden.py")],
        env={**clean, "PI_ORACLE": str(tmp_path / "nope.mjs")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"record_golden: PI_ORACLE={tmp_path / 'nope.mjs'} is not a file\n"
