"""The commands that load with the "context" keep policy (``context``, ``compact --dry-run``) print
byte for byte what they print when the loader keeps every entry, on every golden session, in
every output format, at several leaves. The "all" run is made by switching the policy the
commands ask for (``pitools.core.session.load.KEEP_CONTEXT``), so the very same command code runs
over the other index; each run checks which index it got, so neither side can quietly fall
back to the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pitools.core.session import load as api
from pitools.core.session.lean import LeanIndex
from pitools.core.session.tree import SessionIndex
from pitools.errors import PitoolsError

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))

COMMANDS = [
    ["context", "--format", "json"],
    ["context", "--format", "markdown"],
    ["context"],
    ["compact", "--dry-run", "--format", "json", "--no-config", "--keep-recent-tokens", "300"],
    ["compact", "--dry-run", "--no-config", "--entries", "--keep-recent-tokens", "300"],
]


pytestmark = pytest.mark.usefixtures("cli_recursion_limit")


def _leaves(path: Path) -> list[str | None]:
    try:
        full = api.load(path)
    except PitoolsError:
        return [None]
    leaves = [x for x in full.index.leaves() if isinstance(x, str) and x != full.index.leaf_id]
    return [None, *leaves[:1]]  # Pi's default leaf, and another branch's tip


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_context_policy_prints_what_keeping_everything_prints(
    run: Any, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    path = GOLDEN / case / "session.jsonl"
    real_load = api.load
    got: list[type] = []

    def recording_load(*args: Any, **kwargs: Any) -> Any:
        loaded = real_load(*args, **kwargs)
        got.append(type(loaded.index))
        return loaded

    monkeypatch.setattr(api, "load", recording_load)
    lean_seen = False
    for leaf in _leaves(path):
        for command in COMMANDS:
            argv = [command[0], path, *command[1:], *([] if leaf is None else ["--leaf", leaf])]
            got.clear()
            monkeypatch.setattr(api, "KEEP_CONTEXT", "context")
            lean = run(*argv, exit_code=None)
            lean_index = got[:1]
            got.clear()
            monkeypatch.setattr(api, "KEEP_CONTEXT", "all")
            full = run(*argv, exit_code=None)
            assert got[:1] in ([SessionIndex], []), "the 'all' run did not keep everything"
            assert (lean.exit_code, lean.stdout_bytes, lean.stderr) == (
                full.exit_code,
                full.stdout_bytes,
                full.stderr,
            ), f"{argv}: the keep policies print different things"
            lean_seen = lean_seen or lean_index == [LeanIndex]
    if _is_plain_v3(path):
        assert lean_seen, "a v3 session never loaded with the context policy"


def _is_plain_v3(path: Path) -> bool:
    try:
        return api.load(path, keep="context").kept == "context"
    except PitoolsError:
        return False
