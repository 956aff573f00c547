"""pitools navigate: the dry run against Pi's recorded navigateToDefault, --summarize/--label with
builtin and a local model server, and every precondition checked before the first request
(for compact --apply too)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from pitools.core.parity import diff_values
from tests import support
from tests.golden.navigate_cases import load_recording as load_navigate_recording
from tests.golden.test_conformance import GOLDEN, load_recording
from tests.unit.summarize.summarize_fakes import FakeModelServer, Step

ROOT = support.ROOT
PLAN_SCHEMA = json.loads((ROOT / "schemas" / "output" / "navigate.schema.json").read_text())
APPLY_SCHEMA = json.loads((ROOT / "schemas" / "output" / "navigate-apply.schema.json").read_text())
SEED = GOLDEN / "seed-running-example" / "session.jsonl"
PREAMBLE = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    p = tmp_path / "seed.jsonl"
    shutil.copy(SEED, p)
    return p


@pytest.mark.parametrize("case", ["seed-running-example", "gen-s0047_v3", "gen-s0009_v3", "branches-usage-tails"])
def test_dry_run_json_equals_pis_navigate_to_default(run, case: str) -> None:
    pi = load_recording(case, 20000)
    compared = 0
    for leaf, rec in pi["byLeaf"].items():
        nav = rec.get("navigateToDefault")
        if nav is None or "error" in nav:
            continue
        args = ["navigate", GOLDEN / case / "session.jsonl", "--leaf", leaf, "--to", nav["targetId"]]
        data = json.loads(run(*args, "--format", "json", "--no-config", "--context-window", "200000").stdout)
        jsonschema.validate(data, PLAN_SCHEMA)
        for key in ("targetId", "commonAncestorId", "entries", "tokenBudget", "prepared"):
            assert not diff_values(data[key], nav[key]), (leaf, key, diff_values(data[key], nav[key]))
        for theirs in nav.get("summaryRequests", []):
            assert theirs["prompt"].startswith(data["prompt"].split("\n</conversation>\n")[0])
        compared += 1
    assert compared >= 1


def test_dry_run_edge_shapes_match_pi(run) -> None:
    """Target == from, a root user message, from an ancestor, a custom message: Pi's values."""
    recs = {r["case"]["name"]: r for r in load_navigate_recording()}
    for name in ("same", "root-user", "from-ancestor", "custom-target", "custom-root-user", "user-target"):
        rec = recs[name]
        src = GOLDEN / rec["case"]["source"] / "session.jsonl"
        args = ["navigate", src, "--leaf", rec["fromId"], "--to", rec["toId"], "--format", "json", "--no-config"]
        data = json.loads(run(*args, "--context-window", "200000").stdout)
        jsonschema.validate(data, PLAN_SCHEMA)
        pi = rec["pi"]
        landing = [step["leaf"] for step in pi["landing"]]
        assert data["noop"] == (landing == [])
        if landing:
            assert data["newLeafId"] == landing[0]
        assert data["editorText"] == pi["result"].get("editorText")
        if "plan" in pi and not data["noop"]:
            assert data["entries"] == pi["plan"]["entries"]
    root = json.loads(run("navigate", SEED, "--to", "U1", "--format", "json", "--no-config").stdout)
    assert root["newLeafId"] is None and root["editorText"] == "检查认证实现"


def test_human_dry_run_says_what_and_writes_nothing(run, seed: Path) -> None:
    before = seed.read_bytes()
    r = run("navigate", seed, "--leaf", "A3", "--to", "U2B", "--no-config")
    assert "common ancestor: A2" in r.stdout
    assert "new leaf: BS1" in r.stdout and "editor text: 改成 session cookie" in r.stdout
    assert "U2 " in r.stdout and "A3 " in r.stdout
    assert "nothing written" in r.stderr
    prompt = run("navigate", seed, "--leaf", "A3", "--to", "U2B", "--no-config", "--show-prompt").stdout
    assert "<conversation>\n[User]: 改成 JWT\n\n[Assistant]: JWT 方案已完成\n</conversation>" in prompt
    same = run("navigate", seed, "--to", "C1", "--no-config")
    assert "Pi does nothing" in same.stdout
    assert seed.read_bytes() == before


def test_targets_resolve_like_leaf_and_errors_are_one_line(run, seed: Path) -> None:
    by_line = json.loads(run("navigate", seed, "--to", "L3", "--format", "json", "--no-config").stdout)
    assert by_line["targetId"] == "A1"
    prefix = json.loads(run("navigate", seed, "--to", "BS", "--format", "json", "--no-config").stdout)
    assert prefix["targetId"] == "BS1"
    r = run("navigate", seed, "--to", "zz", exit_code=1)
    assert "--to 'zz' matches no entry" in r.stderr and r.stderr.count("\n") == 1
    r = run("navigate", seed, "--to", "A", exit_code=1)
    assert "ambiguous" in r.stderr
    r = run("navigate", seed, exit_code=2)
    assert "--to" in r.stderr


def test_cycle_is_a_clear_error(run) -> None:
    r = run("navigate", GOLDEN / "broken-cycle" / "session.jsonl", "--to", "L2", "--no-config", exit_code=1)
    assert "cycle" in r.stderr and "Traceback" not in r.stderr


def test_usage_errors(run, seed: Path) -> None:
    assert "only apply with" in run("navigate", seed, "--to", "A2", "--model", "builtin", exit_code=2).stderr
    assert "never writes" in run("navigate", seed, "--to", "A2", "--dry-run", "--summarize", exit_code=2).stderr
    r = run("navigate", seed, "--to", "A2", "--summarize", "--show-prompt", exit_code=2)
    assert "dry run" in r.stderr
    r = run("navigate", seed, "--to", "A2", "--label", "x", "--model", "builtin", exit_code=2)
    assert "only apply with --summarize" in r.stderr


def test_summarize_builtin_in_place_with_backup(run, seed: Path) -> None:
    before = seed.read_bytes()
    data = json.loads(
        run(
            "navigate",
            seed,
            "--leaf",
            "A3",
            "--to",
            "U2B",
            "--summarize",
            "--model",
            "builtin",
            "--label",
            "tried-jwt",
            "--format",
            "json",
            "--no-config",
        ).stdout
    )
    jsonschema.validate(data, APPLY_SCHEMA)
    summary, label = data["entries"]
    assert summary["type"] == "branch_summary" and summary["parentId"] == "BS1" and summary["fromId"] == "A3"
    assert summary["summary"].startswith(PREAMBLE) and summary["fromHook"] is False
    assert summary["details"] == {"readFiles": [], "modifiedFiles": []}
    assert label == {
        **label,
        "type": "label",
        "parentId": summary["id"],
        "targetId": summary["id"],
        "label": "tried-jwt",
    }
    assert data["leafId"] == label["id"] and data["requests"] == 1 and data["backup"]
    after = seed.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 2
    assert Path(data["backup"]).read_bytes() == before
    # The session as Pi resumes it: at the label, with the summary last in its context.
    ctx = json.loads(run("context", seed, "--format", "json").stdout)
    assert ctx["messages"][-1]["role"] == "branchSummary"


def test_nothing_to_write_says_so_and_exits_0(run, seed: Path) -> None:
    before = seed.read_bytes()
    r = run("navigate", seed, "--leaf", "A2", "--to", "A3", "--summarize", "--model", "builtin", "--no-config")
    assert "nothing was written" in r.stderr
    r = run("navigate", seed, "--to", "C1", "--summarize", "--model", "builtin", "--no-config")
    assert "nothing was written" in r.stderr
    assert seed.read_bytes() == before


def test_label_without_summary_writes_the_label_pi_writes(run, seed: Path) -> None:
    data = json.loads(
        run("navigate", seed, "--leaf", "A3", "--to", "U1", "--label", "top", "--format", "json", "--no-config").stdout
    )
    (label,) = data["entries"]
    assert (label["type"], label["parentId"], label["targetId"], label["label"]) == ("label", None, "U1", "top")
    assert data["requests"] == 0 and data["model"] is None


def test_summarize_with_local_server(run, seed: Path, server: FakeModelServer) -> None:
    server.script(Step(text="## Goal\nFrom the local model.", usage={"prompt_tokens": 50, "completion_tokens": 7}))
    out = seed.parent / "out.jsonl"
    data = json.loads(
        run(
            "navigate",
            seed,
            "--leaf",
            "A3",
            "--to",
            "A6",
            "--summarize",
            "--yes",
            "--model",
            "local-llm",
            "--base-url",
            server.url + "/v1",
            "--no-config",
            "-o",
            out,
            "--format",
            "json",
        ).stdout
    )
    jsonschema.validate(data, APPLY_SCHEMA)
    (entry,) = data["entries"]
    assert entry["summary"] == PREAMBLE + "## Goal\nFrom the local model."
    assert entry["parentId"] == "A6" and entry["usage"]["input"] == 50
    assert len(server.requests) == 1
    body = server.requests[0].body
    user = body["messages"][-1]
    text = user["content"] if isinstance(user["content"], str) else "".join(p["text"] for p in user["content"])
    assert text.startswith("<conversation>\n[User]: 改成 JWT")
    assert out.read_bytes().splitlines()[1:-1] == seed.read_bytes().splitlines()[1:]
    assert seed.read_bytes() == SEED.read_bytes()


# -- every precondition before the first request (issue 28) ----------------------------------------


def _server_args(server: FakeModelServer) -> list[str]:
    return ["--model", "local-llm", "--base-url", server.url + "/v1", "--no-config", "--yes"]


@pytest.mark.parametrize("command", ["navigate", "compact"])
def test_existing_output_is_refused_before_any_request(
    run, session: Path, seed: Path, server: FakeModelServer, command: str
) -> None:
    existing = seed.parent / "taken.jsonl"
    existing.write_text("mine\n")
    if command == "navigate":
        args = ["navigate", seed, "--leaf", "A3", "--to", "A6", "--summarize"]
    else:
        args = ["compact", session, "--apply"]
    r = run(*args, *_server_args(server), "-o", existing, exit_code=1)
    assert "already exists" in r.stderr
    assert server.requests == []  # no paid request was made
    assert existing.read_text() == "mine\n"
    r = run(*args, *_server_args(server), "-o", seed.parent / "no-such-dir" / "o.jsonl", exit_code=1)
    assert "does not exist" in r.stderr and server.requests == []


@pytest.mark.parametrize("command", ["navigate", "compact"])
def test_read_only_file_is_refused_before_any_request(
    run, session: Path, seed: Path, server: FakeModelServer, command: str
) -> None:
    target = seed if command == "navigate" else session
    target.chmod(0o444)
    try:
        if command == "navigate":
            args = ["navigate", seed, "--leaf", "A3", "--to", "A6", "--summarize"]
        else:
            args = ["compact", session, "--apply"]
        r = run(*args, *_server_args(server), exit_code=1)
        assert "read-only" in r.stderr and server.requests == []
    finally:
        target.chmod(0o644)


def test_paid_model_needs_yes_before_any_request(run, seed: Path, server: FakeModelServer) -> None:
    args = ["navigate", seed, "--leaf", "A3", "--to", "A6", "--summarize", "--model", "local-llm"]
    r = run(*args, "--base-url", server.url + "/v1", "--no-config", exit_code=2)
    assert "--yes" in r.stderr and server.requests == []


def test_builtin_fallback_is_never_written_in_place_unasked(run, seed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    before = seed.read_bytes()
    r = run("navigate", seed, "--leaf", "A3", "--to", "A6", "--summarize", "--no-config", exit_code=1)
    assert "refusing to write a builtin" in r.stderr
    assert seed.read_bytes() == before


def test_file_changed_before_the_request_is_refused(seed: Path) -> None:
    """The leaf was chosen from one read: a line appended since then stops it before the model."""
    from pitools import store
    from pitools.core.session.load import load
    from pitools.errors import SessionChangedError
    from pitools.ops.navigate import NavigateSetup, navigate_apply
    from pitools.ops.summarizing import SummarizeRequest
    from tests.golden.test_navigate_golden import _PiFake

    stamp = store.stamp(str(seed))
    loaded = load(str(seed))
    with seed.open("ab") as fh:
        fh.write(b'{"type":"label","id":"zz","parentId":"C1","timestamp":"2026-01-01T00:00:00Z","targetId":"C1"}\n')
    fake = _PiFake()
    with pytest.raises(SessionChangedError):
        navigate_apply(
            NavigateSetup(loaded, "A3", "A6", 200000, 16384, {}, None, [], str(seed), stamp, window_from_flag=True),
            SummarizeRequest(backup=False, use_config=False, summarizer=fake),
            summarize=True,
            label=None,
        )
    assert fake.requests == []


def test_help_is_documented(run) -> None:
    text = run("help", "navigate").stdout
    for word in ("--to", "--summarize", "--label", "--show-prompt", "--reserve-tokens", "editor"):
        assert word in text
    assert "navigate" in run("--help").stdout


def test_hostile_session_text_never_reaches_the_terminal_raw(run, tmp_path: Path) -> None:
    """Editor text, the prompt, ids and labels are session text: escapes and markup stay inert."""
    evil = "\x1b]0;pwned\x07\x1b[31mred[bold]x[/bold]\u202e"
    lines = [
        {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/x"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": evil, "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": evil}]},
        },
        {
            "type": "message",
            "id": f"u2{evil}",
            "parentId": "a1",
            "timestamp": "2026-01-01T00:00:03Z",
            "message": {"role": "user", "content": evil, "timestamp": 2},
        },
    ]
    p = tmp_path / "evil.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for extra in ([], ["--show-prompt"], ["--entries"]):
        r = run("navigate", p, "--to", "u1", "--no-config", *extra)
        for out in (r.stdout, r.stderr):
            assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    r = run("navigate", p, "--to", "u1", "--no-config", "--label", evil)
    assert "\x1b" not in r.stdout + r.stderr


def test_budget_comes_from_pis_branch_summary_setting(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    args = ["navigate", SEED, "--leaf", "A3", "--to", "C1", "--format", "json", "--context-window", "50000"]
    assert json.loads(run(*args).stdout)["tokenBudget"] == 50000 - 16384
    (agent / "settings.json").write_text('{"branchSummary": {"reserveTokens": 1000}}')
    data = json.loads(run(*args).stdout)
    assert data["tokenBudget"] == 49000 and "settings.json" in data["budget"]["reserveTokens"]["source"]
    assert json.loads(run(*args, "--reserve-tokens", "10").stdout)["tokenBudget"] == 49990
    assert json.loads(run(*args, "--no-config").stdout)["tokenBudget"] == 50000 - 16384
    # Pi subtracts whatever is stored: a string makes the budget NaN, i.e. no limit at all.
    (agent / "settings.json").write_text('{"branchSummary": {"reserveTokens": "lots"}}')
    r = run(*args)
    assert json.loads(r.stdout)["tokenBudget"] is None and "not a number" in r.stderr


def test_v1_session_dry_run_says_ids_are_stand_ins_and_apply_refuses(run, tmp_path: Path) -> None:
    v1 = tmp_path / "v1.jsonl"
    shutil.copy(GOLDEN / "gen-s0002_v1" / "session.jsonl", v1)
    r = run("navigate", v1, "--to", "L2", "--no-config")
    assert "stand-ins" in r.stderr
    before = v1.read_bytes()
    r = run("navigate", v1, "--to", "L2", "--summarize", "--model", "builtin", "--no-config", exit_code=1)
    assert "migrate" in r.stderr and v1.read_bytes() == before


def test_where_pi_throws_building_the_request_nothing_is_asked_or_written(run, tmp_path: Path) -> None:
    case = GOLDEN / "repair-crash-content" / "session.jsonl"
    pi = load_recording("repair-crash-content", 20000)
    nav = pi["byLeaf"]["4e646309"]["navigateToDefault"]
    assert "msg.content.some is not a function" in nav["result"]["error"]  # Pi's own failure
    args = ["navigate", case, "--leaf", "4e646309", "--to", nav["targetId"], "--no-config"]
    data = json.loads(run(*args, "--format", "json").stdout)
    assert data["prompt"] is None and "msg.content.some is not a function" in data["promptError"]
    out = tmp_path / "out.jsonl"
    r = run(*args, "--summarize", "--model", "builtin", "-o", out, exit_code=1)
    assert "throws" in r.stderr and not out.exists()


def test_navigating_past_a_tool_call_pi_cannot_estimate(run, tmp_path: Path) -> None:
    # A tool call written with `input` instead of `arguments`: Pi's prepareBranchEntries throws
    # estimating it, so a summary fails; navigateTree without one never calls it and moves the leaf.
    case = "parity-tool-call-input"
    nav = load_recording(case, 20000)["byLeaf"]["c0000004"]["navigateToDefault"]
    assert "error" in nav["prepared"] and "error" in nav["result"]
    session = tmp_path / "s.jsonl"
    shutil.copy(GOLDEN / case / "session.jsonl", session)
    before = session.read_bytes()
    args = ("navigate", session, "--leaf", "c0000004", "--to", nav["targetId"], "--context-window", "200000")
    plan = json.loads(run(*args, "--format", "json").stdout)
    jsonschema.validate(plan, PLAN_SCHEMA)
    assert plan["commonAncestorId"] == nav["commonAncestorId"] and plan["entries"] == nav["entries"]
    assert plan["tokenBudget"] == nav["tokenBudget"]
    assert plan["promptError"].startswith(nav["prepared"]["error"])
    human = run(*args).stdout
    assert "Pi 1.6.0 throws preparing the branch summary" in human and "without a summary works" in human
    failed = run(*args, "--summarize", "--model", "builtin", "--yes", exit_code=1)
    assert nav["result"]["error"] in failed.stderr and "nothing was written" in failed.stderr
    assert session.read_bytes() == before
    run(*args, "--label", "here", "--no-backup")  # without a summary Pi moves the leaf; the label is written
    assert session.read_bytes() != before
