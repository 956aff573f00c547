"""Issue 40 through the real commands: ``compact --apply`` and ``navigate --summarize`` on a session
whose first line is garbage, or whose last line has no newline; a torn last line is refused.
(Pi's reading of the written files is in ``tests/golden/test_append_golden.py``.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pitools.core.session.load import load
from tests import support

GARBAGE = support.GOLDEN / "gen-s0021_broken-garbagefirst+secondheader+dupidcycle" / "session.jsonl"
CRLF = support.GOLDEN / "gen-s0008_broken-crlf+unterminated" / "session.jsonl"

COMMANDS = {
    "compact": ["compact", "--apply", "--keep-recent-tokens", "2000"],
    "navigate-garbage": ["navigate", "--leaf", "a7237a1a", "--to", "4085740e", "--summarize", "--label", "back"],
    "navigate-crlf": ["navigate", "--to", "6991c0cb", "--summarize"],
}
CASES = [
    ("garbage", GARBAGE, "compact"),
    ("garbage", GARBAGE, "navigate-garbage"),
    ("crlf", CRLF, "compact"),
    ("crlf", CRLF, "navigate-crlf"),
]


def _cmd(name: str, path: Path, *extra: str) -> list[str]:
    verb, *rest = COMMANDS[name]
    return [verb, str(path), *rest, "--model", "builtin", "--yes", "--no-config", *extra]


@pytest.mark.parametrize(("shape", "source", "command"), CASES, ids=[f"{s}-{c}" for s, _, c in CASES])
def test_in_place_appends_at_pis_leaf(run, tmp_path: Path, shape: str, source: Path, command: str) -> None:
    session = tmp_path / "s.jsonl"
    shutil.copyfile(source, session)
    original = session.read_bytes()
    run(*_cmd(command, session))
    written = session.read_bytes()
    assert written.startswith(original)
    if shape == "crlf":  # Pi's loader terminates the last line before appending: so does pitools
        assert not original.endswith(b"\n") and written[len(original) : len(original) + 1] == b"\n"
    assert written.endswith(b"\n")
    backups = list(tmp_path.glob("s.jsonl.bak-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == original
    loaded = load(str(session))
    new_last = loaded.session.entries[-1]
    assert loaded.leaf(None) == new_last["id"]
    assert new_last["type"] in ("compaction", "branch_summary", "label")
    assert len(loaded.session.entries) > len(load(str(backups[0])).session.entries)


@pytest.mark.parametrize(("shape", "source", "command"), CASES, ids=[f"{s}-{c}" for s, _, c in CASES])
def test_output_copy_appends_at_pis_leaf(run, tmp_path: Path, shape: str, source: Path, command: str) -> None:
    session = tmp_path / "s.jsonl"
    shutil.copyfile(source, session)
    original = session.read_bytes()
    out = tmp_path / "out.jsonl"
    run(*_cmd(command, session, "-o", str(out)))
    assert session.read_bytes() == original  # -o never touches the source
    loaded = load(str(out))
    assert loaded.session.header is not None
    assert loaded.session.header["parentSession"] == str(session)
    assert loaded.leaf(None) == loaded.session.entries[-1]["id"]
    if shape == "garbage":
        assert out.read_bytes().split(b"\n", 1)[0] == b"this line is not json"


@pytest.mark.parametrize("command", ["compact", "navigate-garbage"])
@pytest.mark.parametrize("output", [False, True], ids=["in-place", "-o"])
def test_a_torn_last_line_is_refused_naming_it(run, tmp_path: Path, command: str, output: bool) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(GARBAGE.read_bytes() + b'{"type":"message","id":"torn","parentId":"4085')
    before = session.read_bytes()
    extra = ["-o", str(tmp_path / "out.jsonl")] if output else []
    r = run(*_cmd(command, session, *extra), exit_code=1)
    assert "last line (46 bytes, no newline) is not complete JSON" in r.stderr
    assert "Traceback" not in r.stderr
    assert session.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # no backup, no output


def test_a_blank_unterminated_last_line_is_terminated(run, tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(GARBAGE.read_bytes() + b"  \r")
    original = session.read_bytes()
    run(*_cmd("compact", session, "--no-backup"))
    written = session.read_bytes()
    assert written.startswith(original + b"\n{")
    assert load(str(session)).session.entries[-1]["type"] == "compaction"


def test_a_failure_after_the_write_says_what_was_written(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: the write happened, then a later step failed: the user was told only "internal
    error", as if nothing had been written."""
    from pitools.core.context import build
    from pitools.errors import PitoolsError

    session = tmp_path / "s.jsonl"
    shutil.copyfile(GARBAGE, session)

    real_replay = build.replay_context
    before = {e.get("id") for e in load(str(GARBAGE)).session.entries if isinstance(e, dict)}

    def broken_replay(index: object, leaf: object, *args: object, **kwargs: object) -> object:
        if leaf in before:  # the plan's replays, before the write
            return real_replay(index, leaf, *args, **kwargs)
        raise ValueError("replay went wrong")

    monkeypatch.setattr(build, "replay_context", broken_replay)
    r = run(*_cmd("compact", session), exit_code=3)
    last = r.stderr.strip().splitlines()[-1]
    assert "compaction entry " in last and f"was written to {session} (backup: {session}.bak-" in last
    assert "but then an internal error (ValueError: replay went wrong); this is a bug" in last
    assert load(str(session)).session.entries[-1]["type"] == "compaction"

    def refused_replay(index: object, leaf: object, *args: object, **kwargs: object) -> object:
        if leaf in before:
            return real_replay(index, leaf, *args, **kwargs)
        raise PitoolsError("cannot replay")

    monkeypatch.setattr(build, "replay_context", refused_replay)
    r = run(*_cmd("navigate-garbage", session, "--no-backup"), exit_code=1)
    last = r.stderr.strip().splitlines()[-1]
    assert "branch_summary entry " in last and " and label entry " in last
    assert f"was written to {session}, but then: cannot replay" in last
