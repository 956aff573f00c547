"""``pitools request``: the body as bytes, the human view, --check, --diff-model, validate --for-model.

Expected bodies come from pi-ai itself (``golden/*/requests.jsonl``, see
tests/golden/test_request_parity.py); these tests cover the command around them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"
HANDOFF = GOLDEN / "request-handoff" / "session.jsonl"
WEDGES = GOLDEN / "request-wedges" / "session.jsonl"
SCHEMA = json.loads((ROOT / "schemas" / "output" / "request.schema.json").read_text())
VALIDATE_SCHEMA = json.loads((ROOT / "schemas" / "output" / "validate.schema.json").read_text())


def _schema_ok(data: Any, schema: dict[str, Any] = SCHEMA) -> None:
    Draft202012Validator.check_schema(schema)
    errors = list(Draft202012Validator(schema).iter_errors(data))
    assert not errors, errors[0].message


def _recorded(case: str, model: str, leaf: str | None = None, thinking: str | None = None) -> str:
    data = support.golden_requests(case)
    for r in data["records"]:
        if r["model"] == model and r.get("leafArg") == leaf and r["thinking"] == thinking:
            return str(r["payload"])
    raise AssertionError("no such recording")


@pytest.mark.parametrize(
    "model",
    [
        "anthropic/claude-sonnet-4-5",
        "openai/gpt-5",
        "groq/openai/gpt-oss-120b",
        "google/gemini-2.5-pro",
        "deepseek/deepseek-v4-pro",
    ],
)
def test_json_is_pi_ais_body_byte_for_byte(run: Any, model: str) -> None:
    result = run("request", WEDGES, "--model", model, "--format", "json")
    assert result.stdout_bytes == _recorded("request-wedges", model).encode("utf-8") + b"\n"
    _schema_ok(json.loads(result.stdout))


def test_leaf_and_thinking_options_reach_the_body(run: Any) -> None:
    out = run("request", WEDGES, "--model", "openai/gpt-5", "--leaf", "e030", "--format", "json").stdout
    assert out.rstrip("\n") == _recorded("request-wedges", "openai/gpt-5", leaf="e030")
    high = run("request", WEDGES, "--model", "google/gemini-2.5-pro", "--thinking", "high", "--format", "json").stdout
    assert high.rstrip("\n") == _recorded("request-wedges", "google/gemini-2.5-pro", thinking="high")


def test_no_api_key_ever_in_output(run: Any) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-api03-secretsecretsecret", "OPENAI_API_KEY": "sk-proj-secretsecret"}
    for model in ("anthropic/claude-sonnet-4-5", "openai/gpt-5"):
        for extra in ((), ("--format", "json"), ("--check",)):
            result = run("request", HANDOFF, "--model", model, *extra, env=env, exit_code=None)
            assert "secret" not in result.stdout + result.stderr


def test_human_view_lists_blocks_and_transformations(run: Any) -> None:
    out = run("request", WEDGES, "--model", "anthropic/claude-sonnet-4-5", "--leaf", "e030").stdout
    assert "anthropic-messages" in out
    assert "messages.4" in out and "redacted_thinking" in out
    for code in (
        "thinking-dropped",
        "tool-call-id-rewritten",
        "synthetic-tool-result",
        "assistant-skipped",
        "error-images-moved",
    ):
        assert code in out


def test_human_view_is_terminal_safe(run: Any, tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s\x1b[2J", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "x\x1b]52;c;AAAA\x07", "name": "bash\u202e", "arguments": {}}],  # noqa: E501
                     "provider": "openai", "api": "openai-responses", "model": "gpt-5", "stopReason": "toolUse"}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run("request", session, "--model", "anthropic/claude-sonnet-4-5", "--check", exit_code=None)
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout and "\x07" not in result.stdout


def test_check_finds_the_handoff_wedge_and_exits_1(run: Any) -> None:
    result = run(
        "request", HANDOFF, "--model", "anthropic/claude-sonnet-4-5", "--check", "--format", "json", exit_code=1
    )
    data = json.loads(result.stdout)
    _schema_ok(data)
    found = {(f["code"], f["path"]) for f in data["findings"]}
    assert found == {
        ("foreign-thinking-signature", "messages.1.content.0.signature"),
        ("tool-id-pattern", "messages.1.content.1.id"),
        ("tool-id-pattern", "messages.2.content.0.tool_use_id"),
        ("thinking-missing-in-tool-loop", "messages.4.content.0"),
    }
    assert all(f["source"] for f in data["findings"])
    assert data["ok"] is False
    # The body really holds what the findings name (pi-ai's own recording).
    body = json.loads(_recorded("request-handoff", "anthropic/claude-sonnet-4-5"))
    assert "|" in body["messages"][1]["content"][1]["id"]
    assert body["messages"][4]["content"][0]["type"] == "tool_use"


def test_check_passes_where_pi_ai_repairs_everything(run: Any) -> None:
    result = run("request", HANDOFF, "--model", "google/gemini-2.5-pro", "--check", "--format", "json")
    assert json.loads(result.stdout)["ok"] is True
    human = run("request", HANDOFF, "--model", "openai/gpt-5", "--check").stdout
    assert "no provider rule is broken" in human


def test_check_thinking_off_drops_the_tool_loop_rule(run: Any) -> None:
    data = json.loads(
        run(
            "request",
            HANDOFF,
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--thinking",
            "off",
            "--check",
            "--format",
            "json",
            exit_code=1,
        ).stdout
    )
    assert "thinking-missing-in-tool-loop" not in {f["code"] for f in data["findings"]}


def test_diff_model(run: Any) -> None:
    data = json.loads(
        run(
            "request",
            HANDOFF,
            "--diff-model",
            "openai/gpt-5",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--format",
            "json",
        ).stdout
    )
    _schema_ok(data)
    assert data["a"]["api"] == "openai-responses" and data["b"]["api"] == "anthropic-messages"
    assert data["sameApi"] is False
    same = json.loads(
        run(
            "request",
            WEDGES,
            "--diff-model",
            "anthropic/claude-opus-4-7",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--format",
            "json",
        ).stdout
    )
    paths = {c["path"] for c in same["changes"]}
    assert "model" in paths and "max_tokens" in paths
    human = run(
        "request", WEDGES, "--diff-model", "anthropic/claude-opus-4-7", "--model", "anthropic/claude-sonnet-4-5"
    ).stdout
    assert "changed" in human and "claude-opus-4-7" in human


def test_validate_for_model(run: Any) -> None:
    result = run("validate", HANDOFF, "--for-model", "anthropic/claude-sonnet-4-5", exit_code=1)
    assert "foreign-thinking-signature" in result.stdout and "messages.1.content.0.signature" in result.stdout
    data = json.loads(
        run("validate", HANDOFF, "--for-model", "anthropic/claude-sonnet-4-5", "--format", "json", exit_code=1).stdout
    )
    _schema_ok(data, VALIDATE_SCHEMA)
    assert data["status"] == "fail" and data["requestChecks"][0]["ok"] is False
    run("validate", HANDOFF, "--for-model", "google/gemini-2.5-pro")


def test_validate_for_model_over_the_golden_corpus_fits_the_schema(run: Any) -> None:
    """Every golden session at once (Pi-written, generated, broken, healed): one JSON document that
    fits the schema, with a request check for each file Pi can load."""
    data = json.loads(
        run("validate", GOLDEN, "--for-model", "anthropic/claude-sonnet-4-5", "--format", "json", exit_code=1).stdout
    )
    _schema_ok(data, VALIDATE_SCHEMA)
    assert len(data["files"]) > 150 and len(data["requestChecks"]) > 100


def test_validate_for_model_counts_the_request_findings(run: Any) -> None:
    result = run("validate", HANDOFF, "--for-model", "anthropic/claude-sonnet-4-5", exit_code=1)
    lines = result.stdout.rstrip("\n").splitlines()
    assert lines[-1] == "1 file checked, 1 with findings: 4 errors, 0 warnings, 0 info — failed"
    assert "no problems found" not in result.stdout
    assert f"hint: pitools heal {HANDOFF} --for-model anthropic/claude-sonnet-4-5" in result.stderr
    data = json.loads(
        run("validate", HANDOFF, "--for-model", "anthropic/claude-sonnet-4-5", "--format", "json", exit_code=1).stdout
    )
    assert data["counts"] == {"error": 4, "warning": 0, "info": 0} and data["status"] == "fail"
    github = run(
        "validate", HANDOFF, "--for-model", "anthropic/claude-sonnet-4-5", "--format", "github", exit_code=1
    ).stdout
    assert github.rstrip("\n").splitlines()[-1].startswith("1 file checked, 1 with findings: 4 errors")
    clean = run("validate", HANDOFF, "--for-model", "google/gemini-2.5-pro")
    assert clean.stdout.rstrip("\n").splitlines()[-1] == "1 file checked: no problems found"
    assert "pitools heal" not in clean.stderr


def test_validate_for_model_warnings_fail_only_with_strict(run: Any, tmp_path: Path) -> None:
    # A context that fits the window but not with the output cap: context-near-window (a warning).
    session = tmp_path / "big.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "word " * 80000, "timestamp": 1}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = "groq/llama-3.3-70b-versatile"
    data = json.loads(run("validate", session, "--for-model", model, "--format", "json").stdout)
    assert [f["code"] for f in data["requestChecks"][0]["findings"]] == ["context-near-window"]
    assert data["counts"]["warning"] == 1 and data["status"] == "ok"
    strict = run("validate", session, "--for-model", model, "--strict", "--format", "json", exit_code=1).stdout
    assert json.loads(strict)["status"] == "fail"


def test_validate_for_model_malformed_is_a_usage_error(run: Any) -> None:
    result = run("validate", HANDOFF, "--for-model", "claude", exit_code=2)
    assert "'claude' is not PROVIDER/ID" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--model", "mistral/mistral-large-latest"], 1, "mistral-conversations API"),
        (["--model", "nope/x"], 1, "unknown provider 'nope'"),
        (["--model", "anthropic/claude-nope"], 1, "no such model"),
        (["--model", "noslash"], 2, "'noslash' is not PROVIDER/ID"),
        (["--model", "anthropic/"], 2, "is not PROVIDER/ID"),
        (["--model", "/claude"], 2, "is not PROVIDER/ID"),
        (["--model", "openai/gpt-5", "--diff-model", "gpt-4o"], 2, "'gpt-4o' is not PROVIDER/ID"),
        (["--model", "anthropic/claude-sonnet-4-5", "--leaf", "zzzz"], 1, "zzzz"),
        (["--model", "anthropic/claude-sonnet-4-5", "--thinking", "huge"], 2, "huge"),
        (["--model", "anthropic/claude-sonnet-4-5", "--check", "--diff-model", "openai/gpt-5"], 2, "do not combine"),
    ],
)
def test_bad_usage_is_one_line(run: Any, args: list[str], code: int, message: str) -> None:
    result = run("request", HANDOFF, *args, exit_code=code)
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    if code == 2:
        assert len([line for line in result.stderr.splitlines() if "Error" in line]) == 1


def test_model_defaults_to_the_one_at_the_leaf(run: Any) -> None:
    # The handoff session's branch ends with a model change back to Claude.
    result = run("request", HANDOFF, "--format", "json")
    assert result.stdout.rstrip("\n") == _recorded("request-handoff", "anthropic/claude-sonnet-4-5")
    assert "model: anthropic/claude-sonnet-4-5 (the model at the leaf" in result.stderr
    # Another leaf, another model (what Pi's getBranchSelection returns there): e030's branch
    # last answered with gpt-5; the body is pi-ai's own recording.
    gpt5 = run("request", WEDGES, "--leaf", "e030", "--format", "json")
    assert "model: openai/gpt-5 " in gpt5.stderr
    assert gpt5.stdout.rstrip("\n") == _recorded("request-wedges", "openai/gpt-5", leaf="e030")
    opus = run("request", WEDGES, "--format", "json")
    assert "model: anthropic/claude-opus-4-7 " in opus.stderr
    # A model the session names but pitools cannot build for is named in a one-line error (exit 1).
    codex = run("request", WEDGES, "--leaf", "e006", exit_code=1)
    assert "openai-codex" in codex.stderr and "Traceback" not in codex.stderr


def test_no_model_at_the_leaf_is_a_usage_error(run: Any, tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run("request", session, exit_code=2)
    assert "no model at this leaf" in result.stderr and "--model" in result.stderr
    run("request", session, "--model", "openai/gpt-5", "--format", "json")


def test_check_ends_with_the_heal_command(run: Any, tmp_path: Path) -> None:
    out = run("request", HANDOFF, "--check", exit_code=1).stdout
    assert out.rstrip("\n").splitlines()[-1] == (f"fix: pitools heal {HANDOFF} --for-model anthropic/claude-sonnet-4-5")
    clean = run("request", HANDOFF, "--model", "google/gemini-2.5-pro", "--check").stdout
    assert "pitools heal" not in clean
    assert "pitools heal" not in run("request", HANDOFF, "--check", "--format", "json", exit_code=1).stdout
    # A file name with spaces and a control character: quoted for the shell, never raw.
    odd = tmp_path / "my run \x1b[2J.jsonl"
    odd.write_bytes(HANDOFF.read_bytes())
    last = run("request", odd, "--check", exit_code=1).stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith("fix: pitools heal '") and "\x1b" not in last


def test_check_rules_on_a_wedge_session_through_main(run: Any, tmp_path: Path) -> None:
    """The string-arguments wedge (pi-ai's body is in golden/request-wedges/check-requests.jsonl)."""
    cases = json.loads((GOLDEN / "request-wedges" / "check-cases.json").read_text())
    session = tmp_path / "args.jsonl"
    session.write_text(cases["sessions"]["arguments-json-string"])
    data = json.loads(run("request", session, "--check", "--format", "json", exit_code=1).stdout)
    _schema_ok(data)
    assert [(f["code"], f["path"]) for f in data["findings"]] == [
        ("tool-arguments-not-object", "messages.1.content.0.input"),
        ("tool-arguments-not-object", "messages.4.content.0.input"),
    ]
    run("request", session, "--model", "openai/gpt-4o", "--check")


def test_models_json_defines_a_model(run: Any, tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {
                        "baseUrl": "http://127.0.0.1:8080/v1",
                        "api": "openai-completions",
                        "models": [{"id": "qwen-coder", "contextWindow": 32768, "maxTokens": 4096}],
                    }
                }
            }
        )
    )
    result = run(
        "request",
        HANDOFF,
        "--model",
        "local/qwen-coder",
        "--format",
        "json",
        env={"PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    body = json.loads(result.stdout)
    assert body["model"] == "qwen-coder" and body["max_completion_tokens"] <= 4096
    assert "store" not in body or body["store"] is False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=20),
            st.integers(),
            st.none(),
            st.dictionaries(
                st.sampled_from(["type", "id", "text", "name", "content", "role", "thinking"]),
                st.one_of(st.text(max_size=8), st.none(), st.integers()),
                max_size=4,
            ),
        ),
        max_size=4,
    )
)
def test_fuzzed_messages_never_traceback(run: Any, tmp_path: Path, junk: list[Any]) -> None:
    session = tmp_path / "fuzz.jsonl"
    lines = [{"type": "session", "version": 3, "id": "f", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"}]
    parent = None
    for i, value in enumerate(junk):
        role = ["user", "assistant", "toolResult"][i % 3]
        lines.append({"type": "message", "id": f"m{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:01Z",
                      "message": {"role": role, "content": value, "provider": "openai", "api": "openai-responses", "model": "gpt-5"}})  # fmt: skip  # noqa: E501
        parent = f"m{i}"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for model in (
        "anthropic/claude-sonnet-4-5",
        "openai/gpt-5",
        "groq/llama-3.3-70b-versatile",
        "google/gemini-2.5-pro",
    ):
        result = run("request", session, "--model", model, "--check", exit_code=None)
        assert result.exit_code in (0, 1), result.stderr
        assert "Traceback" not in result.stderr


def test_validate_for_model_github_annotations_escape_the_path(run: Any, tmp_path: Path) -> None:
    odd = tmp_path / "a,b:c.jsonl"
    odd.write_bytes(HANDOFF.read_bytes())
    model = "anthropic/claude-sonnet-4-5"
    out = run("validate", odd, "--for-model", model, "--format", "github", exit_code=1).stdout
    annotations = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(annotations) == 4
    assert all(line.startswith(f"::error file={tmp_path}/a%2Cb%3Ac.jsonl,title=") for line in annotations)


def test_validate_for_model_counts_a_request_that_cannot_be_built(run: Any, tmp_path: Path) -> None:
    session = tmp_path / "odd.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": 5, "provider": "openai", "api": "openai-responses",
                     "model": "gpt-5", "stopReason": "stop", "timestamp": 2}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = json.loads(
        run("validate", session, "--for-model", "anthropic/claude-sonnet-4-5", "--format", "json", exit_code=1).stdout
    )
    check = data["requestChecks"][0]
    assert "error" in check and data["status"] == "fail"
    file_errors = data["files"][0]["counts"]["error"]
    assert data["counts"]["error"] == file_errors + 1
