"""``compact --apply`` under attack (issue 12): the writers' race and hostile configuration.

Each test reproduces a reported failure: a line appended between pitools' read and its append,
two simultaneous runs, ``--no-config`` ignored, ``!commands`` run before the user agreed, keys
and header values leaking into error messages.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from pitools import store
from tests.support import ROOT, golden_session
from tests.unit.summarize.summarize_fakes import FakeModelServer, Step

GEN = golden_session("gen-s0001_v3")
APPENDED = (
    b'{"type":"message","id":"zz000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
    b'"message":{"role":"user","content":"appended by Pi meanwhile","timestamp":1}}\n'
)


def _compactions(path: Path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if b'"type":"compaction"' in line)


# -- the race ------------------------------------------------------------------------------------------


def test_a_line_appended_after_the_leaf_was_chosen_is_noticed(
    run, session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pi appends while pitools resolves the model (the window of the confirmation prompt)."""
    import pitools.summarize

    real = pitools.summarize.resolve_model

    def appending(*args: Any, **kwargs: Any) -> Any:
        with open(session, "ab") as fh:
            fh.write(APPENDED)
        return real(*args, **kwargs)

    monkeypatch.setattr(pitools.summarize, "resolve_model", appending)
    before = session.read_bytes()
    r = run("compact", session, "--apply", "--model", "builtin", "--no-backup", "--no-config", exit_code=1)
    assert "changed" in r.stderr
    assert session.read_bytes() == before + APPENDED  # nothing of ours was added
    assert _compactions(session) == _compactions(GEN)


def test_the_lock_is_held_from_the_final_check_through_the_append(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitools.ops.compaction import apply_compaction, plan_compact
    from pitools.ops.summarizing import SummarizeRequest
    from pitools.summarize import build_summarizer, builtin_spec

    seen: list[str] = []

    def try_to_lock() -> None:
        fd = os.open(session, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("got the lock: a second writer could interleave")
        except BlockingIOError:
            seen.append("locked")
        finally:
            os.close(fd)

    monkeypatch.setattr(store, "_after_final_check", try_to_lock)
    planning = plan_compact(str(session), keep_recent_tokens=2000, use_config=False, for_apply=True)
    apply_compaction(planning, SummarizeRequest(summarizer=build_summarizer(builtin_spec()), backup=False))
    assert seen == ["locked"]
    assert _compactions(session) == _compactions(GEN) + 1


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
def test_concurrent_runs_append_exactly_one_compaction(session: Path) -> None:
    cmd = [sys.executable, "-m", "pitools", "compact", str(session), "--apply", "--model", "builtin"]
    cmd += ["--no-backup", "--no-config", "--keep-recent-tokens", "2000"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    results = [(p.wait(), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        if p.stderr:
            p.stderr.close()
    codes = sorted(code for code, _ in results)
    assert _compactions(session) == _compactions(GEN) + 1, results
    assert codes.count(0) == 1 and codes.count(1) == 3, results
    lines = session.read_bytes().splitlines()
    assert lines[: len(GEN.read_bytes().splitlines())] == GEN.read_bytes().splitlines()


# -- hostile configuration ------------------------------------------------------------------------------


def _agent(tmp_path: Path, marker: Path) -> Path:
    agent = tmp_path / "agent"
    agent.mkdir()
    command = f"!touch {marker} && echo sk-ant-from-command-0123456789"
    (agent / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": command}}))
    return agent


def _paid(server: FakeModelServer) -> list[str]:
    return ["--model", "anthropic/claude-sonnet-4-5", "--base-url", server.url]


def test_no_command_runs_before_refusing_off_a_terminal(
    run, session: Path, server: FakeModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "command-ran"
    agent = _agent(tmp_path, marker)
    env = {"PI_CODING_AGENT_DIR": str(agent), "ANTHROPIC_API_KEY": None}
    r = run("compact", session, "--apply", *_paid(server), env=env, exit_code=2)
    assert "--yes" in r.stderr
    assert not marker.exists() and server.requests == []
    # The same configuration with --yes does run the command (the setup is live).
    run("compact", session, "--apply", "--yes", *_paid(server), env=env)
    assert marker.exists()
    assert server.requests[0].headers["x-api-key"] == "sk-ant-from-command-0123456789"


def test_no_config_reads_no_config_file(run, session: Path, server: FakeModelServer, tmp_path: Path) -> None:
    marker = tmp_path / "command-ran"
    agent = _agent(tmp_path, marker)
    env = {"PI_CODING_AGENT_DIR": str(agent), "ANTHROPIC_API_KEY": "sk-ant-from-env-0123456789"}
    run("compact", session, "--apply", "--yes", "--no-config", *_paid(server), env=env)
    assert not marker.exists()
    assert server.requests[0].headers["x-api-key"] == "sk-ant-from-env-0123456789"


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("sk-ant-secretvalue-123456\n", "line break"),
        ("sk-ant-secretvalue-123456\r\n", "line break"),
        ("sk-ant-secretvalue-123456\t", "line break or tab"),
        ("sk-ant-secretvalue-ключ-123456", "non-ASCII"),
    ],
)
def test_unsendable_keys_are_a_clear_error_that_never_shows_the_key(
    run, session: Path, server: FakeModelServer, key: str, message: str
) -> None:
    env = {"ANTHROPIC_API_KEY": key}
    r = run("compact", session, "--apply", "--yes", "--no-config", *_paid(server), env=env, exit_code=1)
    assert message in r.stderr and "Traceback" not in r.stderr
    assert "secretvalue" not in r.stderr + r.stdout
    assert server.requests == []


def test_header_values_from_variables_are_redacted_in_errors(
    run, session: Path, server: FakeModelServer, tmp_path: Path
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    models = {
        "providers": {
            "acme": {
                "baseUrl": server.url + "/v1",
                "api": "openai-completions",
                "apiKey": "literal-key-not-a-secret-name",
                "headers": {"X-Tenant": "$TENANT_ID", "X-Team": "!echo team-secret-4242"},
                "models": [{"id": "m"}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    tenant = "tenant secret/98765"
    echoed = f"tenant {tenant} / team team-secret-4242 / {json.dumps(tenant)} / {quote(tenant)} / {quote_plus(tenant)}"
    server.script(Step(kind="error", status=401, body={"error": {"message": echoed}}))
    env = {"PI_CODING_AGENT_DIR": str(agent), "TENANT_ID": tenant}
    r = run("compact", session, "--apply", "--yes", "--model", "acme/m", env=env, exit_code=1)
    assert server.requests and server.requests[0].headers["x-tenant"] == tenant  # it was sent
    assert "401" in r.stderr
    assert "team-secret-4242" not in r.stderr and "98765" not in r.stderr
    assert r.stderr.count("***") >= 5
