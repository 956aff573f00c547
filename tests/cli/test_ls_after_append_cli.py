"""``pitools ls`` after Pi appended to sessions: the index's resumed summaries equal a rebuild's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.archive_gen import Archive, private_pi_env

Run = Callable[..., Result]


def test_ls_json_after_appends_equals_a_rebuild(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private_pi_env(tmp_path, monkeypatch)
    monkeypatch.setenv("TZ", "UTC")
    ar = Archive(tmp_path / "agent", seed=11)
    p = ar.new("/work/app")
    p.conversation(2)
    p.write()
    c = ar.fork(p, p.leaf)  # type: ignore[arg-type]
    c.conversation(1)
    c.write()
    before = json.loads(run("ls", "--all", "--format", "json").stdout)
    # Pi appends: a name, a model change, usage from several sources, a new branch.
    start_p, start_c = len(p.entries), len(c.entries)
    p.add("session_info", name="  renamed while running ")
    p.add("model_change", provider="openai", modelId="gpt-x")
    p.conversation(2)
    p.usage_entry()
    p.branch_from(p.entries[1]["id"])
    p.user("a later branch")
    p.append(start_p)
    c.tool_result("sub-agent ran", tool="subagent", with_usage=True)
    c.conversation(1)
    c.append(start_c)
    update = json.loads(run("index", "--format", "json").stdout)["update"]
    assert update["appended"] == 2 and update["reindexed"] == 0
    assert update["bytesRead"] == sum(w.path.stat().st_size for w in (p, c)) - sum(
        s["fileBytes"] for s in before["sessions"]
    )
    warm = json.loads(run("ls", "--all", "--format", "json").stdout)
    monkeypatch.setenv("PITOOLS_CACHE_DIR", str(tmp_path / "fresh-cache"))
    rebuilt = json.loads(run("ls", "--all", "--format", "json").stdout)
    assert warm == rebuilt
    assert warm != before
    assert {s["name"] for s in warm["sessions"]} == {"renamed while running", None}


def test_lone_surrogates_do_not_break_the_index(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON allows ``"\\ud800"``: a hostile session holding lone surrogates (cwd, parent session,
    name, first message, a long tool output) is indexed, appended to and listed like ``--no-cache``."""
    private_pi_env(tmp_path, monkeypatch)
    folder = tmp_path / "agent" / "sessions" / "--x--"
    folder.mkdir(parents=True)
    path = folder / "2026-01-01T00-00-00-000Z_x.jsonl"
    long = "lorem " * 400
    lines = [
        r'{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w\ud800",'
        r'"parentSession":"/p\udc00.jsonl"}',
        r'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        r'"message":{"role":"user","content":"hi \ud800 there","timestamp":1}}',
        r'{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z",'
        r'"message":{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{"type":"text","text":"'
        + long
        + r'\udbff"}],"timestamp":2}}',
    ]
    path.write_text("\n".join(lines[:2]) + "\n")
    first = json.loads(run("ls", "--all", "--format", "json").stdout)
    with open(path, "a") as fh:
        fh.write(lines[2] + "\n")
        fh.write(
            r'{"type":"session_info","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z",'
            r'"name":"n\udfff"}' + "\n"
        )
    update = json.loads(run("index", "--format", "json").stdout)["update"]
    assert update["appended"] == 1
    warm = json.loads(run("ls", "--all", "--format", "json").stdout)
    plain = json.loads(run("ls", "--all", "--no-cache", "--format", "json").stdout)
    assert warm["sessions"] == plain["sessions"] != first["sessions"]
    assert warm["sessions"][0]["name"] == "n\udfff"
    run("usage", "--format", "json")
    assert len(json.loads(run("search", "lorem", "--format", "json").stdout)["hits"]) == 1
