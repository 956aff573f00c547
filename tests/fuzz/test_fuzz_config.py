"""Hostile configuration: whatever Pi's config files and a project's settings say, pitools runs no
``!command`` before the user agreed, writes nowhere the configuration chose, and exits 0, 1 or 2
with a message (never a traceback).

Each example builds an agent dir (``models.json``, ``auth.json``, ``settings.json``,
``trust.json``) and a project ``.pi/settings.json`` from hostile pieces: ``!commands`` that would
leave a marker, ``$VARIABLES``, keys with line breaks or non-ASCII characters, wrong types, broken
JSON, and a ``sessionDir`` pointing at a folder an attacker chose. Then ``compact --dry-run``,
``compact --apply`` without ``--yes`` (not a terminal) and ``clone`` run on a session.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.support import CLI_EXAMPLES, hypothesis_settings
from tests.support import PITOOLS, cli_recursion_limit, golden_session

SOURCE = golden_session("gen-s0001_v3")
PROVIDERS = ["anthropic", "openai", "acme", "ollama", "openrouter", "google-vertex"]


def _values(marker: Path) -> st.SearchStrategy[Any]:
    command = f"!touch {marker}"
    text = st.sampled_from(
        [
            command,
            command + " && echo sk-ant-x",
            "$HOSTILE_VAR",
            "${HOME}",
            "sk-ant-key-with-newline\n",
            "ключ",
            "",
            "http://127.0.0.1:9/v1",
            "!false",
        ]
    )
    return st.one_of(text, st.integers(-5, 5), st.none(), st.booleans(), st.lists(text, max_size=2))


def _configs(marker: Path, evil: Path) -> st.SearchStrategy[dict[str, Any]]:
    value = _values(marker)
    provider = st.fixed_dictionaries(
        {},
        optional={
            "baseUrl": value,
            "api": st.sampled_from(["openai-completions", "anthropic-messages", "nope", 3]),
            "apiKey": value,
            "headers": st.dictionaries(st.sampled_from(["X-Tenant", "Authorization", "X-A"]), value, max_size=2),
            "authHeader": st.booleans(),
            "models": st.lists(st.fixed_dictionaries({"id": st.sampled_from(["m", "claude-sonnet-4-5"])}), max_size=2),
        },
    )
    models = st.fixed_dictionaries({"providers": st.dictionaries(st.sampled_from(PROVIDERS), provider, max_size=3)})
    auth = st.dictionaries(
        st.sampled_from(PROVIDERS),
        st.fixed_dictionaries({"type": st.sampled_from(["api_key", "oauth", "x"])}, optional={"key": value}),
        max_size=3,
    )
    settings = st.fixed_dictionaries(
        {},
        optional={
            "defaultProvider": st.sampled_from(PROVIDERS),
            "defaultModel": st.sampled_from(["m", "claude-sonnet-4-5"]),
            "defaultProjectTrust": st.sampled_from(["always", "never", "ask", 1]),
            "sessionDir": st.just(str(evil)),
            "compaction": st.fixed_dictionaries({}, optional={"keepRecentTokens": st.integers(0, 3000)}),
        },
    )
    project = st.fixed_dictionaries(
        {"sessionDir": st.sampled_from([str(evil), str(evil / "deeper"), "~/evil", "../evil"])},
        optional={"compaction": st.fixed_dictionaries({}, optional={"reserveTokens": st.integers(-1, 99)})},
    )
    broken = st.sampled_from(["{", '{"providers": {}, // comment\n}', "[]", "null", "\ufeff{}"])
    as_text = st.one_of(st.builds(json.dumps, st.one_of(models, auth, settings)), broken)
    return st.fixed_dictionaries(
        {
            "models.json": st.one_of(st.builds(json.dumps, models), broken),
            "auth.json": st.one_of(st.builds(json.dumps, auth), broken),
            "settings.json": st.one_of(st.builds(json.dumps, settings), broken),
            "project": st.one_of(st.builds(json.dumps, project), broken),
        },
        optional={"trust.json": as_text},
    )


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile-config")


def _run(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(PITOOLS, args, env=env, catch_exceptions=True)
    return result.exit_code, result.stderr


@hypothesis_settings(CLI_EXAMPLES)
@given(data=st.data())
def test_hostile_configuration(data: st.DataObject, place: Path) -> None:
    for child in place.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    marker, evil = place / "command-ran", place / "attacker-chosen"
    config = data.draw(_configs(marker, evil))
    agent, project = place / "agent", place / "project"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    for name in ("models.json", "auth.json", "settings.json", "trust.json"):
        if name in config:
            (agent / name).write_text(config[name], encoding="utf-8")
    (project / ".pi" / "settings.json").write_text(config["project"], encoding="utf-8")
    session = project / "s.jsonl"
    shutil.copy(SOURCE, session)
    env = {
        "HOME": str(place / "home"),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_CODING_AGENT_SESSION_DIR": "",
        "HOSTILE_VAR": "hostile-value\r\n",
        "ANTHROPIC_API_KEY": "",
        "OPENAI_API_KEY": "",
    }
    here = os.getcwd()
    os.chdir(project)
    try:
        with cli_recursion_limit():
            runs = [
                _run(["compact", str(session), "--dry-run"], env),
                _run(["compact", str(session), "--apply", "--no-backup"], env),
                _run(["clone", str(session)], env),
            ]
    finally:
        os.chdir(here)
    for code, stderr in runs:
        assert code in (0, 1, 2), (code, stderr, config)
        assert "Traceback" not in stderr, (stderr, config)
    assert not marker.exists(), ("a configured !command ran without consent", config)
    assert not evil.exists(), ("the configuration chose where pitools writes", config)
