"""pitools compact: --dry-run against Pi's recorded plans; --apply with builtin and a local model server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from pitools.core.parity import diff_values
from tests import support
from tests.golden.test_conformance import GOLDEN, load_recording
from tests.unit.summarize.summarize_fakes import FakeModelServer, Step

ROOT = support.ROOT
PLAN_SCHEMA = json.loads((ROOT / "schemas" / "output" / "compact-plan.schema.json").read_text())
APPLY_SCHEMA = json.loads((ROOT / "schemas" / "output" / "compact-apply.schema.json").read_text())
GEN = GOLDEN / "gen-s0001_v3" / "session.jsonl"


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.parametrize("krt", [20000, 2000, 300])
@pytest.mark.parametrize("case", ["gen-s0001_v3", "gen-s0022_v3", "recovery-omission", "gen-s0016_v3"])
def test_dry_run_json_equals_pis_prepare_compaction(run, case: str, krt: int) -> None:
    pi = load_recording(case, krt)
    for leaf, rec in pi["byLeaf"].items():
        if "error" in rec:
            continue
        args = ["compact", GOLDEN / case / "session.jsonl", "--dry-run", "--format", "json", "--no-config"]
        data = json.loads(run(*args, "--leaf", leaf, "--keep-recent-tokens", krt).stdout)
        jsonschema.validate(data, PLAN_SCHEMA)
        expected = rec["compaction"]
        if expected is None:
            assert data["preparation"] is None and data["reason"]
            continue
        prep = data["preparation"]
        for key in (
            "firstKeptEntryId",
            "isSplitTurn",
            "tokensBefore",
            "previousSummary",
            "fileOps",
            "settings",
            "serializedConversation",
            "serializedTurnPrefix",
        ):
            assert diff_values(prep[key], expected[key]) == [], key
        assert diff_values(prep["messagesToSummarize"], expected["messagesToSummarize"]) == []
        assert diff_values(prep["turnPrefixMessages"], expected["turnPrefixMessages"]) == []


def test_dry_run_human(run, snapshot) -> None:
    r = run(
        "compact",
        GOLDEN / "recovery-omission" / "session.jsonl",
        "--dry-run",
        "--no-config",
        "--keep-recent-tokens",
        "300",
        "--color",
        "never",
        env={"PITOOLS_WIDTH": "120"},
    )
    assert "── to summarize (1 entry) ──" in r.stdout and "── kept verbatim (4 entries) ──" in r.stdout
    assert "▶" in r.stdout
    assert r.stdout == snapshot


def test_dry_run_show_prompt(run) -> None:
    r = run("compact", GEN, "--dry-run", "--no-config", "--show-prompt", "--format", "json")
    reqs = json.loads(r.stdout)["summaryRequests"]
    assert reqs and reqs[0]["kind"] == "history" and reqs[0]["prompt"].startswith("<conversation>\n")


def test_dry_run_already_compacted(run) -> None:
    data = json.loads(
        run("compact", GOLDEN / "seed-running-example" / "session.jsonl", "--dry-run", "--format", "json").stdout
    )
    assert data["preparation"] is None and "already compacted" in data["reason"]


def test_settings_from_pi_files(run, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"keepRecentTokens": 1234, "reserveTokens": 999}}')
    data = json.loads(
        run("compact", GEN, "--dry-run", "--format", "json", env={"PI_CODING_AGENT_DIR": str(agent)}).stdout
    )
    assert data["settings"]["keepRecentTokens"]["value"] == 1234
    assert "settings" in data["settings"]["keepRecentTokens"]["source"]
    data = json.loads(
        run(
            "compact",
            GEN,
            "--dry-run",
            "--format",
            "json",
            "--keep-recent-tokens",
            "50",
            env={"PI_CODING_AGENT_DIR": str(agent)},
        ).stdout
    )
    assert data["settings"]["keepRecentTokens"] == {"value": 50, "source": "flag --keep-recent-tokens"}
    data = json.loads(
        run(
            "compact",
            GEN,
            "--dry-run",
            "--format",
            "json",
            "--no-config",
            env={"PI_CODING_AGENT_DIR": str(agent)},
        ).stdout
    )
    assert data["settings"]["keepRecentTokens"]["value"] == 20000


def test_invalid_setting_is_an_error(run, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"keepRecentTokens": -5}}')
    r = run("compact", GEN, "--dry-run", env={"PI_CODING_AGENT_DIR": str(agent)}, exit_code=1)
    assert "keepRecentTokens" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--dry-run", "--apply"],
        ["--dry-run", "--model", "builtin"],
        ["--model", "builtin"],
        ["--apply", "--show-prompt"],
    ],
)
def test_usage_errors(run, args: list[str]) -> None:
    run("compact", GEN, *args, exit_code=2)


def test_without_apply_it_is_a_dry_run(run, tmp_path: Path) -> None:
    # One rule for every writer: a dry run unless told to write (as navigate, migrate, repair, slim).
    file = tmp_path / "s.jsonl"
    file.write_bytes(Path(GEN).read_bytes())
    before = file.read_bytes()
    plain = run("compact", file)
    assert plain.stdout == run("compact", file, "--dry-run").stdout
    assert file.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


# -- apply -------------------------------------------------------------------------------------


def _lines(p: Path) -> list[bytes]:
    return p.read_bytes().splitlines()


def test_apply_builtin_in_place(run, session: Path) -> None:
    before = session.read_bytes()
    data = json.loads(
        run(
            "compact",
            session,
            "--apply",
            "--model",
            "builtin",
            "--keep-recent-tokens",
            "2000",
            "--no-config",
            "--format",
            "json",
        ).stdout
    )
    jsonschema.validate(data, APPLY_SCHEMA)
    after = session.read_bytes()
    assert after.startswith(before) and after[len(before) :].count(b"\n") == 1
    entry = json.loads(_lines(session)[-1])
    assert entry == data["entry"]
    assert entry["type"] == "compaction" and entry["parentId"] == "b888ee9c" and entry["fromHook"] is False
    assert Path(data["backup"]).read_bytes() == before
    assert data["tokensAfter"] < data["tokensBefore"]
    # the new entry is now the default leaf, and its context starts with the summary
    ctx = json.loads(run("context", session, "--format", "json").stdout)
    roles = [m["role"] for m in ctx["messages"]]
    assert ctx["leafId"] == entry["id"]
    assert roles[: 2 if "systemMessage" in entry else 1][-1] == "compactionSummary"
    # compacting again right away: the branch ends in a compaction
    r = run("compact", session, "--apply", "--model", "builtin", "--no-config", exit_code=1)
    assert "already compacted" in r.stderr


def test_apply_to_new_file_leaves_original(run, session: Path, tmp_path: Path) -> None:
    before = session.read_bytes()
    out = tmp_path / "out.jsonl"
    run("compact", session, "--apply", "--model", "builtin", "-o", out, "--no-config")
    assert session.read_bytes() == before
    # A new session: new id and timestamp, parentSession -> the source; every entry line unchanged.
    old_lines, new_lines = before.splitlines(keepends=True), out.read_bytes().splitlines(keepends=True)
    assert new_lines[1 : len(old_lines)] == old_lines[1:] and len(new_lines) == len(old_lines) + 1
    old_header, new_header = json.loads(old_lines[0]), json.loads(new_lines[0])
    assert new_header["id"] != old_header["id"] and new_header["parentSession"] == str(session.resolve())
    assert {k: v for k, v in new_header.items() if k not in ("id", "timestamp", "parentSession")} == {
        k: v for k, v in old_header.items() if k not in ("id", "timestamp", "parentSession")
    }
    run("validate", out)  # no error (the source's own warnings stay)


def test_apply_refuses_legacy_and_torn_files(run, tmp_path: Path) -> None:
    v1 = tmp_path / "v1.jsonl"
    shutil.copy(GOLDEN / "v1-compaction-by-index" / "session.jsonl", v1)
    r = run(
        "compact",
        v1,
        "--apply",
        "--model",
        "builtin",
        "--no-config",
        "--keep-recent-tokens",
        "10",
        exit_code=1,
    )
    assert "pitools migrate" in r.stderr
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(GEN.read_bytes() + b'{"type":"message","id":"x"')
    before = torn.read_bytes()
    r = run("compact", torn, "--apply", "--model", "builtin", "--no-config", "--leaf", "b888ee9c", exit_code=1)
    assert "no newline" in r.stderr
    assert torn.read_bytes() == before


def test_apply_with_paid_model_needs_yes_off_a_terminal(run, session: Path, server: FakeModelServer) -> None:
    r = run(
        "compact",
        session,
        "--apply",
        "--model",
        "local-llm",
        "--base-url",
        server.url + "/v1",
        "--no-config",
        exit_code=2,
    )
    assert "--yes" in r.stderr
    assert server.requests == []


def test_apply_openai_compatible_server(run, session: Path, server: FakeModelServer) -> None:
    server.script(
        Step(
            text="## Goal\nFrom the local model.",
            usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        )
    )
    data = json.loads(
        run(
            "compact",
            session,
            "--apply",
            "--yes",
            "--model",
            "local-llm",
            "--base-url",
            server.url + "/v1",
            "--no-config",
            "--format",
            "json",
        ).stdout
    )
    entry = data["entry"]
    assert entry["summary"].startswith("## Goal\nFrom the local model.")
    assert data["requests"] == len(server.requests) == 2  # this plan splits a turn: history + turn prefix
    second = 1000  # the fake server's default usage for an unscripted reply
    assert entry["usage"]["input"] == 100 + second and entry["usage"]["totalTokens"] > 120
    body = server.requests[0].body
    assert body["model"] == "local-llm" and "tools" not in body
    user = body["messages"][-1]
    text = user["content"] if isinstance(user["content"], str) else "".join(p["text"] for p in user["content"])
    assert user["role"] == "user" and text.startswith("<conversation>\n")


def test_apply_anthropic_server(run, session: Path, server: FakeModelServer) -> None:
    server.script(Step(text="## Goal\nFrom Claude."))
    data = json.loads(
        run(
            "compact",
            session,
            "--apply",
            "--yes",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--base-url",
            server.url,
            "--no-config",
            "--format",
            "json",
            env={"ANTHROPIC_API_KEY": "sk-ant-test-key-123"},
        ).stdout
    )
    assert data["entry"]["summary"].startswith("## Goal\nFrom Claude.")
    req = server.requests[0]
    assert req.path.endswith("/v1/messages") and req.headers["x-api-key"] == "sk-ant-test-key-123"
    assert "sk-ant-test-key-123" not in json.dumps(data)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([Step(kind="length")], "token"),
        ([Step(kind="tool")], "tool"),
        ([Step(kind="error", status=400, body={"error": {"message": "bad request"}})], "400"),
        ([Step(kind="error", status=401, body={"error": {"message": "invalid key"}})], "401"),
        ([Step(kind="drop")] * 4, ""),
        ([Step(kind="error", status=500, body="boom")] * 4, "500"),
    ],
)
def test_apply_failures_write_nothing(run, session: Path, server: FakeModelServer, steps, message: str) -> None:
    server.script(*steps)
    before = session.read_bytes()
    r = run(
        "compact",
        session,
        "--apply",
        "--yes",
        "--model",
        "local-llm",
        "--base-url",
        server.url + "/v1",
        "--no-config",
        exit_code=1,
        env={"PITOOLS_RETRY_BASE_DELAY": "0.001"},
    )
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert session.read_bytes() == before
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


def test_apply_retries_429_then_succeeds(run, session: Path, server: FakeModelServer) -> None:
    server.script(Step(kind="error", status=429, body={"error": {"message": "slow down"}}), Step(text="## Goal\nok"))
    r = run(
        "compact",
        session,
        "--apply",
        "--yes",
        "--model",
        "local-llm",
        "--base-url",
        server.url + "/v1",
        "--no-config",
        env={"PITOOLS_RETRY_BASE_DELAY": "0.001"},
    )
    assert "retry" in r.stderr and "429" in r.stderr
    assert json.loads(_lines(session)[-1])["summary"].startswith("## Goal\nok")


def test_apply_timeout_writes_nothing(run, session: Path, server: FakeModelServer) -> None:
    server.script(*[Step(kind="sleep", delay=3)] * 4)
    before = session.read_bytes()
    run(
        "compact",
        session,
        "--apply",
        "--yes",
        "--model",
        "local-llm",
        "--base-url",
        server.url + "/v1",
        "--no-config",
        "--timeout",
        "1",
        exit_code=1,
        env={"PITOOLS_RETRY_BASE_DELAY": "0.001"},
    )
    assert session.read_bytes() == before


def test_apply_refuses_when_file_changes_during_the_call(session: Path) -> None:
    from pitools.errors import SessionChangedError
    from pitools.ops.compaction import apply_compaction, plan_compact
    from pitools.ops.summarizing import SummarizeRequest
    from pitools.summarize import SummaryResult, zero_usage

    class Meddler:
        def summarize(self, request):  # another process appends while the model works
            with open(session, "ab") as fh:
                fh.write(b'{"type":"label","id":"zz","parentId":null,"timestamp":"2026-01-01T00:00:00Z"}\n')
            return SummaryResult(text="x", usage=zero_usage(), provider="p", model="m")

    with pytest.raises(SessionChangedError):
        planning = plan_compact(str(session), keep_recent_tokens=2000, use_config=False, for_apply=True)
        apply_compaction(planning, SummarizeRequest(summarizer=Meddler()))
    assert b'"type":"compaction"' not in _lines(session)[-1]


def test_dry_run_human_leads_with_the_plan_and_collapses_long_regions(run, tmp_path: Path) -> None:
    from tests.cli.test_output_cli import _long_session

    file = _long_session(tmp_path, entries=60)
    args = ["compact", file, "--dry-run", "--no-config", "--keep-recent-tokens", "2000", "--color", "never"]
    out = run(*args).stdout
    plan, _, listing = out.partition("Entries (first and last 3 of each region; --entries lists all):")
    assert "Regions on the branch (120 entries):" in plan and "to summarize" in plan and "Cut at " in plan
    assert "why: the newest ~2,000 tokens stay" in plan and "After compaction Pi sends:" in plan
    assert "… " in listing and " entries …" in listing  # the middle of a long region is collapsed
    assert len(listing.splitlines()) < 20
    full = run(*args, "--entries").stdout
    assert "Entries:" in full and "entries …" not in full
    assert len(full.splitlines()) > 121
    run("compact", file, "--apply", "--entries", exit_code=2)


def test_apply_without_a_key_needs_builtin_said_explicitly(
    run, session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    for var in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(var)
    before = session.read_bytes()
    r = run("compact", session, "--apply", "--no-config", exit_code=1)
    assert "refusing to write a builtin (offline, extractive) summary into" in r.stderr
    assert str(session) in r.stderr and "--model builtin" in r.stderr
    assert session.read_bytes() == before
    out = tmp_path / "new.jsonl"
    r = run("compact", session, "--apply", "--no-config", "-o", out)
    assert f"summarizing with builtin (offline, extractive); the compaction goes into a new file {out}" in r.stderr
    r = run("compact", session, "--apply", "--no-config", "--model", "builtin")
    assert f"the compaction goes into {session} (in place)" in r.stderr and session.read_bytes() != before


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.parametrize(("answer", "written"), [(b"y\n", True), (b"n\n", False)])
def test_apply_without_a_key_asks_on_a_terminal(session: Path, answer: bytes, written: bool) -> None:
    from tests.cli.test_output_cli import in_pty

    before = session.read_bytes()
    env = {k: None for k in __import__("os").environ if k.endswith("_API_KEY")}
    status, out = in_pty("compact", session, "--apply", "--no-config", env=env, answer=answer)
    assert b"Append a builtin summary to" in out
    assert (session.read_bytes() != before) is written
    assert status == (0 if written else 1)


@pytest.mark.parametrize("to_new_file", [False, True])
def test_apply_reports_the_written_files_context_without_reading_it_again(
    run, session: Path, tmp_path: Path, to_new_file: bool
) -> None:
    """tokensAfter and the human context come from the entries already loaded plus the new line:
    they must equal a fresh load of the file that was written."""
    from pitools.core.context.build import replay_context
    from pitools.core.session.load import load

    target = tmp_path / "new.jsonl" if to_new_file else session
    extra = ["-o", str(target)] if to_new_file else []
    args = ["compact", session, "--apply", "--model", "builtin", "--keep-recent-tokens", "2000", "--no-config"]
    data = json.loads(run(*args, *extra, "--format", "json").stdout)
    fresh = load(str(target))
    assert fresh.index.entries[-1]["id"] == data["entry"]["id"]
    assert data["tokensAfter"] == replay_context(fresh.index, data["entry"]["id"]).estimate.tokens


def _line(entry: dict) -> str:
    return json.dumps(entry, ensure_ascii=False)


def test_dry_run_json_fails_before_writing_where_pi_throws(run, tmp_path: Path) -> None:
    """An assistant message whose content is a string: Pi's serializeConversation throws
    (``msg.content.some is not a function``) after the plan is made. The JSON plan is written in
    pieces, yet nothing reaches stdout: one error line, exit 1."""
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"}
    entries = [header]
    parent = None
    for i in range(8):
        role = "user" if i % 2 == 0 else "assistant"
        content: object = [{"type": "text", "text": f"message {i} " + "x" * 400}]
        if i == 1:
            content = "a plain string where Pi expects blocks"
        message = {"role": role, "content": content, "timestamp": 1772359200000 + i}
        if role == "assistant":
            message |= {"api": "x", "provider": "p", "model": "m", "stopReason": "stop"}
        eid = f"e{i}"
        entries.append(
            {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": "2026-03-01T10:00:01.000Z",
                "message": message,
            }
        )
        parent = eid
    path = tmp_path / "s.jsonl"
    path.write_text("".join(_line(e) + "\n" for e in entries), encoding="utf-8")
    args = ["compact", path, "--dry-run", "--no-config", "--keep-recent-tokens", "100", "--context-window", "200000"]
    r = run(*args, "--format", "json", exit_code=1)
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and "some is not a function" in r.stderr


def test_dry_run_json_is_the_whole_document(run, tmp_path: Path) -> None:
    """The pieces on stdout parse as one document of the plan schema, ending in one newline."""
    r = run("compact", GEN, "--dry-run", "--no-config", "--format", "json", "--keep-recent-tokens", "300")
    assert r.stdout.endswith("}\n") and r.stdout.count("\n") == 1
    data = json.loads(r.stdout)
    jsonschema.validate(data, PLAN_SCHEMA)
    assert data["preparation"]["serializedConversation"].startswith("[User]: ")


def test_dry_run_says_why_context_and_region_tokens_differ(run) -> None:
    # "context ~6,983" comes from the last reply's reported usage; the regions are characters/4.
    human = run("compact", support.ROOT / "examples" / "sample-session.jsonl").stdout
    assert "context ~6,983 tokens" in human and "~578 tokens" in human
    assert "the last reply's reported usage plus characters/4" in human
