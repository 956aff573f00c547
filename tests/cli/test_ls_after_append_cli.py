"""``pitools ls`` after Pi appended to sessions: the index's resumed summaries equal a rebuild's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.archive_gen import Archive, env_for

Run = Callable[..., Result]


def test_ls_json_after_appends_equals_a_rebuild(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = env_for(tmp_path / "agent", tmp_path / "cache", tmp_path / "home")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.chdir(tmp_path)
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
