"""resolve_model: model choice, Pi's config files, credentials and their errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pitools.errors import ConfigError
from pitools.summarize import (
    MissingApiKeyError,
    ModelSpec,
    UnsupportedProviderError,
    build_summarizer,
    resolve_model,
)
from pitools.summarize.builtin import BuiltinSummarizer

KEY = "sk-ant-api03-TESTKEY-abcdefghijklmnop"
BASE_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent-home"}


def write(directory: Path, name: str, data: object) -> None:
    text = data if isinstance(data, str) else json.dumps(data)
    (directory / name).write_text(text, encoding="utf-8")


def resolve(
    model: str | None,
    agent_dir: Path,
    *,
    session: tuple[str, str] | None = None,
    base_url: str | None = None,
    **env: str,
) -> ModelSpec:
    return resolve_model(model, session_model=session, agent_dir=agent_dir, env={**BASE_ENV, **env}, base_url=base_url)


# -- choice -----------------------------------------------------------------------------


def test_builtin_when_nothing_is_configured(agent_dir: Path) -> None:
    spec = resolve(None, agent_dir)
    assert spec.api == "builtin" and spec.api_key is None
    assert isinstance(build_summarizer(spec), BuiltinSummarizer)


def test_builtin_by_name_ignores_everything_else(agent_dir: Path) -> None:
    write(agent_dir, "models.json", "not json")  # never read
    assert resolve("builtin", agent_dir, session=("anthropic", "claude-sonnet-4-5")).api == "builtin"


def test_model_argument_beats_session_beats_settings(agent_dir: Path) -> None:
    write(agent_dir, "settings.json", {"defaultProvider": "openai", "defaultModel": "gpt-x"})
    env = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": "sk-openai-abcdefghijk", "GROQ_API_KEY": "gsk_x"}
    assert resolve(None, agent_dir, **env).label == "openai/gpt-x"
    assert resolve(None, agent_dir, session=("anthropic", "claude-a"), **env).label == "anthropic/claude-a"
    chosen = resolve("groq/llama-3", agent_dir, session=("anthropic", "claude-a"), **env)
    assert chosen.label == "groq/llama-3"


def test_settings_provider_only_uses_pis_default_model(agent_dir: Path) -> None:
    write(agent_dir, "settings.json", {"defaultProvider": "anthropic"})
    assert resolve(None, agent_dir, ANTHROPIC_API_KEY=KEY).label == "anthropic/claude-opus-5-5"


def test_agent_dir_from_environment(tmp_path: Path) -> None:
    directory = tmp_path / "pi-home"
    directory.mkdir()
    write(directory, "settings.json", {"defaultProvider": "openai", "defaultModel": "gpt-x"})
    spec = resolve_model(
        None,
        session_model=None,
        env={**BASE_ENV, "PI_CODING_AGENT_DIR": str(directory), "OPENAI_API_KEY": "sk-abcdefghijkl"},
    )
    assert spec.label == "openai/gpt-x"


def test_model_ids_with_slashes(agent_dir: Path) -> None:
    spec = resolve("openrouter/anthropic/claude-x", agent_dir, OPENROUTER_API_KEY="sk-or-abcdefghijk")
    assert (spec.provider, spec.model_id) == ("openrouter", "anthropic/claude-x")
    assert spec.base_url == "https://openrouter.ai/api/v1"


def test_bare_model_id_found_in_catalogue(agent_dir: Path) -> None:
    spec = resolve("claude-sonnet-4-5", agent_dir, ANTHROPIC_API_KEY=KEY)
    assert spec.label == "anthropic/claude-sonnet-4-5"


def test_unknown_bare_model(agent_dir: Path) -> None:
    with pytest.raises(ConfigError, match="provider/model"):
        resolve("no-such-model", agent_dir)


# -- built-in providers and catalogue ---------------------------------------------------


def test_anthropic_with_only_a_key(agent_dir: Path) -> None:
    spec = resolve("anthropic/claude-sonnet-4-5", agent_dir, ANTHROPIC_API_KEY=KEY)
    assert spec.api == "anthropic-messages"
    assert spec.base_url == "https://api.anthropic.com"
    assert spec.api_key is not None and spec.api_key.get_secret_value() == KEY
    assert spec.key_source == "env ANTHROPIC_API_KEY"
    # From pi-ai's catalogue.
    assert (spec.context_window, spec.max_tokens, spec.reasoning) == (200000, 64000, True)
    assert spec.cost is not None and (spec.cost.input, spec.cost.output) == (3, 15)
    assert KEY not in repr(spec) and KEY not in str(spec)


def test_unknown_model_of_known_provider_gets_pi_defaults(agent_dir: Path) -> None:
    spec = resolve("openai/some-future-model", agent_dir, OPENAI_API_KEY="sk-abcdefghijkl")
    # Pi's API for OpenAI, which pitools now calls natively.
    assert spec.api == "openai-responses" and spec.base_url == "https://api.openai.com/v1"
    assert (spec.context_window, spec.max_tokens, spec.reasoning, spec.cost) == (128000, 16384, False, None)


@pytest.mark.parametrize(("model", "env"), [("openai/gpt-5", "OPENAI_API_KEY"), ("xai/grok-4.3", "XAI_API_KEY")])
def test_openai_and_xai_use_the_responses_api_as_pi_does(agent_dir: Path, model: str, env: str) -> None:
    # pi-ai's catalogue gives both the openai-responses API, which pitools now calls natively.
    spec = resolve(model, agent_dir, **{env: "sk-abcdefghijkl"})
    assert spec.api == "openai-responses"


def test_google_and_mistral_go_through_their_openai_endpoints(agent_dir: Path) -> None:
    google = resolve("google/gemini-x", agent_dir, GEMINI_API_KEY="AIzaSyTEST")
    assert google.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    mistral = resolve("mistral/codestral-2508", agent_dir, MISTRAL_API_KEY="m-key")
    assert (mistral.api, mistral.base_url) == ("openai-completions", "https://api.mistral.ai/v1")
    assert mistral.context_window == 256000


def test_missing_key_names_env_var_and_files(agent_dir: Path) -> None:
    with pytest.raises(MissingApiKeyError) as caught:
        resolve("anthropic/claude-sonnet-4-5", agent_dir)
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message
    assert str(agent_dir / "auth.json") in message and str(agent_dir / "models.json") in message
    assert "--model builtin" in message
    assert isinstance(caught.value, ConfigError)


def test_anthropic_auth_token_is_sent_as_bearer(agent_dir: Path) -> None:
    spec = resolve(
        "anthropic/claude-sonnet-4-5", agent_dir, ANTHROPIC_AUTH_TOKEN="tok-abcdefghij", ANTHROPIC_API_KEY=KEY
    )
    assert spec.api_key is None
    assert spec.headers["Authorization"] == "Bearer tok-abcdefghij"
    assert "tok-abcdefghij" not in repr(spec)


def test_anthropic_oauth_tokens_are_unsupported(agent_dir: Path) -> None:
    with pytest.raises(UnsupportedProviderError, match="OAuth"):
        resolve("anthropic/claude-sonnet-4-5", agent_dir, ANTHROPIC_OAUTH_TOKEN="sk-ant-oat01-abcdef")


def test_unsupported_provider(agent_dir: Path) -> None:
    with pytest.raises(UnsupportedProviderError, match="amazon-bedrock"):
        resolve("amazon-bedrock/anthropic.claude", agent_dir)


def test_unknown_provider_needs_a_base_url(agent_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown provider 'acme'.*--base-url"):
        resolve("acme/model-1", agent_dir)


# -- --base-url -------------------------------------------------------------------------


def test_base_url_for_a_local_server(agent_dir: Path) -> None:
    spec = resolve("qwen2.5-coder:7b", agent_dir, base_url="http://localhost:11434/v1/")
    assert (spec.provider, spec.model_id) == ("custom", "qwen2.5-coder:7b")
    assert spec.api == "openai-completions" and spec.base_url == "http://localhost:11434/v1"
    assert spec.api_key is None
    hf = resolve("meta-llama/Llama-3-8B", agent_dir, base_url="http://127.0.0.1:8000/v1")
    assert hf.model_id == "meta-llama/Llama-3-8B"


def test_base_url_overrides_a_known_provider(agent_dir: Path) -> None:
    spec = resolve("anthropic/claude-sonnet-4-5", agent_dir, base_url="http://127.0.0.1:9/")
    assert spec.api == "anthropic-messages" and spec.base_url == "http://127.0.0.1:9"
    assert spec.api_key is None  # a proxy may not need one


@pytest.mark.parametrize(
    ("model", "api"),
    [
        ("openai/gpt-5", "openai-responses"),
        ("xai/grok-4.3", "openai-responses"),
        ("anthropic/claude-sonnet-4-5", "anthropic-messages"),
        ("groq/llama-3", "openai-completions"),
        ("mistral/codestral-2508", "openai-completions"),  # Pi's mistral-conversations: pitools cannot call it
    ],
)
def test_base_url_keeps_the_models_api_as_pis_base_url_override_does(agent_dir: Path, model: str, api: str) -> None:
    """Pi 1.6.0 (core/provider-composer.js): a provider's ``baseUrl`` in models.json "also applies
    to the provider's built-in models" and leaves their ``api`` alone; --base-url is that override."""
    spec = resolve(model, agent_dir, base_url="http://127.0.0.1:9/v1/")
    assert (spec.api, spec.base_url) == (api, "http://127.0.0.1:9/v1")


def test_base_url_with_session_model(agent_dir: Path) -> None:
    spec = resolve(None, agent_dir, session=("ollama", "llama3"), base_url="http://127.0.0.1:11434/v1")
    assert spec.label == "ollama/llama3"


# -- models.json ------------------------------------------------------------------------

MODELS_JSON = """{
  // a local server with a key from the environment
  "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:8080/v1",
      "api": "openai-completions",
      "apiKey": "$LOCAL_KEY",
      "headers": {"X-Team": "${TEAM}-ops", "X-Token": "!printf tok-from-command", "X-Cost": "$$5"},
      "models": [
        {"id": "big", "contextWindow": 65536, "maxTokens": 8192, "reasoning": true,
         "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0},},
      ],
    },
    "anthropic": {
      "baseUrl": "https://proxy.example.com",
      "modelOverrides": {"claude-sonnet-4-5": {"maxTokens": 1000, "cost": {"output": 99}}}
    }
  }
}
"""


def test_models_json_custom_provider(agent_dir: Path) -> None:
    write(agent_dir, "models.json", MODELS_JSON)
    spec = resolve("local/big", agent_dir, LOCAL_KEY="local-secret-123", TEAM="red")
    assert spec.api == "openai-completions" and spec.base_url == "http://127.0.0.1:8080/v1"
    assert spec.api_key is not None and spec.api_key.get_secret_value() == "local-secret-123"
    assert spec.key_source == "models.json"
    assert spec.headers == {"X-Team": "red-ops", "X-Token": "tok-from-command", "X-Cost": "$5"}
    assert (spec.context_window, spec.max_tokens, spec.reasoning) == (65536, 8192, True)
    assert spec.cost is not None and spec.cost.cache_read == 0.1
    assert "tok-from-command" not in repr(spec) and "local-secret-123" not in repr(spec)


def test_models_json_unlisted_model_uses_defaults(agent_dir: Path) -> None:
    write(agent_dir, "models.json", MODELS_JSON)
    spec = resolve("local/other", agent_dir, LOCAL_KEY="k", TEAM="t")
    assert (spec.context_window, spec.max_tokens) == (128000, 16384)


def test_models_json_missing_env_var(agent_dir: Path) -> None:
    write(agent_dir, "models.json", MODELS_JSON)
    with pytest.raises(ConfigError, match="environment variable LOCAL_KEY is not set") as caught:
        resolve("local/big", agent_dir, TEAM="t")
    assert caught.value.path == str(agent_dir / "models.json")


def test_models_json_missing_header_env_var(agent_dir: Path) -> None:
    write(agent_dir, "models.json", MODELS_JSON)
    with pytest.raises(ConfigError, match=r'header "X-Team".*TEAM'):
        resolve("local/big", agent_dir, LOCAL_KEY="k")


def test_models_json_overrides_builtin_provider(agent_dir: Path) -> None:
    write(agent_dir, "models.json", MODELS_JSON)
    spec = resolve("anthropic/claude-sonnet-4-5", agent_dir, ANTHROPIC_API_KEY=KEY)
    assert spec.base_url == "https://proxy.example.com"
    assert spec.max_tokens == 1000 and spec.context_window == 200000
    assert spec.cost is not None and (spec.cost.input, spec.cost.output) == (3, 99)


def test_models_json_auth_header(agent_dir: Path) -> None:
    write(
        agent_dir,
        "models.json",
        {
            "providers": {
                "gw": {
                    "baseUrl": "http://127.0.0.1:1",
                    "api": "anthropic-messages",
                    "apiKey": "gw-key-123456",
                    "authHeader": True,
                }
            }
        },
    )
    spec = resolve("gw/m", agent_dir)
    assert spec.headers["Authorization"] == "Bearer gw-key-123456"
    assert "gw-key-123456" in spec.secrets()


def test_broken_models_json_is_ignored_as_pi_ignores_it(agent_dir: Path) -> None:
    # Pi's ModelConfig.load drops a models.json that is not JSON or fails its schema (maxTokens
    # must be > 0) and carries on with the built-in catalogue: a custom provider is then unknown,
    # and the error says why.
    write(agent_dir, "models.json", "{ nope")
    with pytest.raises(ConfigError, match=r"unknown provider 'local'.*invalid JSON.*Pi ignores models.json"):
        resolve("local/big", agent_dir)
    write(
        agent_dir,
        "models.json",
        {"providers": {"x": {"baseUrl": "http://h", "models": [{"id": "m", "maxTokens": 0}]}}},
    )
    with pytest.raises(ConfigError, match=r"maxTokens.*Pi ignores models.json"):
        resolve("x/m", agent_dir)
    write(agent_dir, "models.json", {"providers": {"x": {"baseUrl": "http://h"}}})
    with pytest.raises(ConfigError, match='no "api"'):
        resolve("x/m", agent_dir)


# -- auth.json --------------------------------------------------------------------------


def test_auth_json_key_wins_over_environment(agent_dir: Path) -> None:
    write(agent_dir, "auth.json", {"anthropic": {"type": "api_key", "key": "sk-ant-from-auth-file-123"}})
    spec = resolve("anthropic/claude-sonnet-4-5", agent_dir, ANTHROPIC_API_KEY=KEY)
    assert spec.api_key is not None and spec.api_key.get_secret_value() == "sk-ant-from-auth-file-123"
    assert spec.key_source == "auth.json"


def test_auth_json_env_reference_and_own_env(agent_dir: Path) -> None:
    write(
        agent_dir,
        "auth.json",
        {"openai": {"type": "api_key", "key": "${MY_KEY}", "env": {"MY_KEY": "sk-own-env-123456"}}},
    )
    spec = resolve("openai/gpt-x", agent_dir, MY_KEY="sk-process-env-999")
    assert spec.api_key is not None and spec.api_key.get_secret_value() == "sk-own-env-123456"


def test_auth_json_command(agent_dir: Path) -> None:
    write(agent_dir, "auth.json", {"openai": {"type": "api_key", "key": "!echo sk-from-command-123"}})
    spec = resolve("openai/gpt-x", agent_dir)
    assert spec.api_key is not None and spec.api_key.get_secret_value() == "sk-from-command-123"


def test_auth_json_unresolvable_key_falls_back(agent_dir: Path) -> None:
    write(agent_dir, "auth.json", {"openai": {"type": "api_key", "key": "$NOT_SET"}})
    assert resolve("openai/gpt-x", agent_dir, OPENAI_API_KEY="sk-env-1234567").key_source == "env OPENAI_API_KEY"
    with pytest.raises(MissingApiKeyError, match="needs NOT_SET"):
        resolve("openai/gpt-x", agent_dir)


def test_auth_json_oauth_is_reported(agent_dir: Path) -> None:
    write(agent_dir, "auth.json", {"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}})
    with pytest.raises(MissingApiKeyError, match="OAuth login"):
        resolve("anthropic/claude-sonnet-4-5", agent_dir)
    assert (
        resolve("anthropic/claude-sonnet-4-5", agent_dir, ANTHROPIC_API_KEY=KEY).key_source == "env ANTHROPIC_API_KEY"
    )


def test_auth_json_invalid(agent_dir: Path) -> None:
    write(agent_dir, "auth.json", {"openai": {"type": "api_key", "key": 5}})
    with pytest.raises(ConfigError, match='invalid credential for provider "openai"'):
        resolve("openai/gpt-x", agent_dir)


def test_models_json_api_mapping(agent_dir: Path) -> None:
    write(
        agent_dir,
        "models.json",
        {
            "providers": {
                "resp": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-responses", "apiKey": "k"},
                "vtx": {"baseUrl": "http://127.0.0.1:1", "api": "google-vertex", "apiKey": "k"},
            }
        },
    )
    assert resolve("resp/m", agent_dir).api == "openai-responses"
    with pytest.raises(UnsupportedProviderError, match="google-vertex"):
        resolve("vtx/m", agent_dir)


def test_summary_request_rejects_unknown_fields() -> None:
    from pydantic import ValidationError

    from pitools.summarize import SummaryRequest

    with pytest.raises(ValidationError):
        SummaryRequest(prompt="p", temperature=0.2)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SummaryRequest(prompt="p", reasoning_level="extreme")  # type: ignore[arg-type]
