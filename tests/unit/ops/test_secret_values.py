"""Which exact values scan/redact look for: Pi's keys (never running a !command), given values, --env."""

from __future__ import annotations

import json
from pathlib import Path

from pitools.ops.secret_values import collect


def write_agent(tmp_path: Path, marker: Path) -> Path:
    agent = tmp_path / "agent"
    agent.mkdir()
    auth = {
        "openai": {"type": "api_key", "key": "Literal-Key-0001"},
        "groq": {"type": "api_key", "key": "$GROQ_FROM_ENV"},
        "corp": {"type": "api_key", "key": f"!echo leaked > {marker}"},
        "anthropic": {"type": "oauth", "access": "Oauth-Access-0002", "refresh": "Oauth-Refresh-0003", "expires": 1},
    }
    (agent / "auth.json").write_text(json.dumps(auth))
    models = {
        "providers": {
            "local": {
                "baseUrl": "http://localhost",
                "apiKey": "Models-Key-0004",
                "headers": {"Authorization": "Bearer Header-Token-0005", "anthropic-version": "2023-06-01"},
                "models": [{"id": "m", "headers": {"x-api-key": f"!touch {marker}"}}],
            }
        }
    }
    (agent / "models.json").write_text("// comment\n" + json.dumps(models))
    return agent


def test_pi_keys(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    agent = write_agent(tmp_path, marker)
    env = {"PI_CODING_AGENT_DIR": str(agent), "GROQ_FROM_ENV": "Groq-Env-0006", "OPENAI_API_KEY": "Env-Key-0007"}
    found = collect(environ=env)
    values = {v.value for v in found.values}
    assert values == {
        "Literal-Key-0001",
        "Groq-Env-0006",
        "Oauth-Access-0002",
        "Oauth-Refresh-0003",
        "Models-Key-0004",
        "Header-Token-0005",
        "Env-Key-0007",
    }
    assert {v.kind for v in found.values} == {"pi-api-key"}
    assert found.skipped_commands == 2 and not marker.exists()
    assert collect(environ=env, pi_keys=False).values == []


def test_given_and_env_values(tmp_path: Path) -> None:
    values = tmp_path / "v.txt"
    values.write_text("From-File-0001\r\nshort\n\n")
    env = {
        "DB_PASSWORD": "Env-Pass-0002",
        "MY_TOKEN": "true",
        "HOME": "/home/someone-long",
        "X_API_KEY": "Env-Key-0003",
    }
    found = collect(given=("Given-0004",), values_file=str(values), env_names=True, pi_keys=False, environ=env)
    assert [(v.kind, v.value) for v in found.values] == [
        ("given-value", "Given-0004"),
        ("given-value", "From-File-0001"),
        ("env-value", "Env-Pass-0002"),
        ("env-value", "Env-Key-0003"),
    ]
    assert found.too_short == 1


def test_broken_config_is_a_note_not_a_crash(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "auth.json").write_text("{not json")
    found = collect(environ={"PI_CODING_AGENT_DIR": str(agent)})
    assert found.values == [] and any("auth.json" in n for n in found.notes)


def test_keys_in_a_models_json_pi_ignores_are_still_secrets(tmp_path: Path) -> None:
    # maxTokens 0 fails Pi's schema, so Pi ignores the file; its key must still be redacted.
    agent = tmp_path / "agent"
    agent.mkdir()
    provider = {"apiKey": "sk-ignored-by-pi-123456", "models": [{"id": "m", "maxTokens": 0}, 5], "baseUrl": "x"}
    (agent / "models.json").write_text(json.dumps({"providers": {"x": provider}}))
    found = collect(environ={"PI_CODING_AGENT_DIR": str(agent)})
    assert "sk-ignored-by-pi-123456" in [v.value for v in found.values]
    assert any("models.json" in n for n in found.notes)
