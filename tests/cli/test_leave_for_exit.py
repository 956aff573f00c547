"""What a command leaves for the process's end (``pitools.cli.leave_for_exit``).

The console script ends with ``os._exit`` as soon as a command returns, so the session a
command loaded is kept until then instead of being freed object by object (about 0.06 s per
100 MB, and more with the read model of the HTML page). In a process that goes on (these tests,
``serve``, the floor guard) nothing may be kept: it would be a leak.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pitools.cli as cli
from pitools.core.compaction.plan import CompactionPlan
from pitools.core.session.load import Loaded
from tests.golden.test_conformance import GOLDEN

SESSION = GOLDEN / "gen-s0000_v3" / "session.jsonl"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def left(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The console script's keep list, for one command run in this process."""
    kept: list[object] = []
    monkeypatch.setattr(cli, "_LEFT_FOR_EXIT", kept)
    return kept


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (["inspect", "--format", "json"], Loaded),
        (["branches", "--format", "json"], Loaded),
        (["context", "--format", "json"], Loaded),
        (["tree"], Loaded),
        (["export", "--format", "markdown"], Loaded),
        (["export", "--format", "html"], Loaded),
        (["compact", "--dry-run", "--no-config", "--format", "json"], CompactionPlan),
    ],
)
def test_a_command_leaves_what_it_loaded(run: Any, left: list[object], args: list[str], kind: type) -> None:
    run(args[0], SESSION, *args[1:])
    assert any(isinstance(obj, kind) for obj in left), [type(obj).__name__ for obj in left]


def test_nothing_is_kept_where_the_process_goes_on(run: Any) -> None:
    """main() on its own (no console script): the list stays off and the session is freed."""
    assert cli._LEFT_FOR_EXIT is None
    run("inspect", SESSION, "--format", "json")
    assert cli._LEFT_FOR_EXIT is None
    cli.leave_for_exit(object())  # a no-op: nothing to grow
    assert cli._LEFT_FOR_EXIT is None


def test_the_console_script_gives_the_same_output(run: Any, tmp_path: Path) -> None:
    """Through the console script (the list on, the fast exit) the bytes are main()'s."""
    out = tmp_path / "page.html"
    code = "from pitools.cli import console_main; console_main()"
    argv = ["export", str(SESSION), "--format", "html", "-o", str(out)]
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    inproc = tmp_path / "inproc.html"
    run("export", SESSION, "--format", "html", "-o", inproc)
    assert out.read_bytes() == inproc.read_bytes()
