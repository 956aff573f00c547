"""The exact values ``scan``/``redact`` look for: Pi's own API keys, given values, env variables.

Pi's keys come from the agent directory (``auth.json``, ``models.json``) and from the
environment variables Pi reads (pi-ai's ``env-api-keys``). A ``!command`` value is NEVER run
here: scanning a file must not execute what a config file says; such keys are counted in
``skipped_commands`` and left out (give them with ``--value`` if needed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pitools.core.secrets.detect import MIN_VALUE_LEN, ExactValue

#: Environment variables Pi 1.6.0 reads credentials from (pi-ai ``env-api-keys``).
_PI_ENV_KEYS_TEXT = (
    "AI_GATEWAY_API_KEY ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN ANTHROPIC_OAUTH_TOKEN ANT_LING_API_KEY "
    "AWS_ACCESS_KEY_ID AWS_BEARER_TOKEN_BEDROCK AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AZURE_OPENAI_API_KEY "
    "BASETEN_API_KEY CEREBRAS_API_KEY CLOUDFLARE_API_KEY COPILOT_GITHUB_TOKEN DEEPSEEK_API_KEY "
    "FIREWORKS_API_KEY GEMINI_API_KEY GOOGLE_CLOUD_API_KEY GROQ_API_KEY HF_TOKEN KIMI_API_KEY META_API_KEY "
    "MINIMAX_API_KEY MINIMAX_CN_API_KEY MISTRAL_API_KEY MOONSHOT_API_KEY NVIDIA_API_KEY OPENAI_API_KEY "
    "OPENCODE_API_KEY OPENROUTER_API_KEY QWEN_TOKEN_PLAN_API_KEY QWEN_TOKEN_PLAN_CN_API_KEY "
    "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY QWEN_TOKEN_PLAN_TEAM_API_KEY "
    "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY RADIUS_API_KEY TOGETHER_API_KEY TYPESAFE_API_KEY XAI_API_KEY "
    "XIAOMI_API_KEY XIAOMI_TOKEN_PLAN_AMS_API_KEY XIAOMI_TOKEN_PLAN_CN_API_KEY XIAOMI_TOKEN_PLAN_SGP_API_KEY "
    "ZAI_API_KEY ZAI_CODING_CN_API_KEY"
)
PI_ENV_KEYS = tuple(_PI_ENV_KEYS_TEXT.split())

#: ``--env``: variables named like a credential.
_ENV_NAME = re.compile(r"(?i)^(?:.*_KEY|.*_TOKEN|.*_SECRET|.*PASSWORD.*)$")

#: Values that are never secrets however they are named.
_TRIVIAL = {"true", "false", "none", "null", "undefined", "yes", "no"}


@dataclass(slots=True)
class SecretValues:
    values: list[ExactValue] = field(default_factory=list)
    #: ``!command`` keys in Pi's config that were not run.
    skipped_commands: int = 0
    #: Values refused because they are shorter than MIN_VALUE_LEN.
    too_short: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, kind: str, value: object) -> None:
        if not isinstance(value, str):
            return
        value = value.strip()
        if not value or value.lower() in _TRIVIAL:
            return
        if len(value) < MIN_VALUE_LEN:
            self.too_short += 1
            return
        self.values.append(ExactValue(kind, value))


def collect(
    *,
    given: tuple[str, ...] = (),
    values_file: str | None = None,
    env_names: bool = False,
    pi_keys: bool = True,
    environ: Mapping[str, str] | None = None,
) -> SecretValues:
    """Every exact value to look for. Reads files and the environment; never runs a command."""
    env = os.environ if environ is None else environ
    out = SecretValues()
    for value in given:
        out.add("given-value", value)
    if values_file is not None:
        from pitools.errors import PitoolsError

        try:
            with open(values_file, encoding="utf-8") as fh:
                for line in fh:
                    out.add("given-value", line.rstrip("\r\n"))
        except OSError as exc:
            raise PitoolsError(f"cannot read the values file: {exc.strerror or exc}", path=values_file) from None
    if env_names:
        for name, value in env.items():
            if _ENV_NAME.match(name):
                out.add("env-value", value)
    if pi_keys:
        _pi_keys(out, env)
    return out


def _pi_keys(out: SecretValues, env: Mapping[str, str]) -> None:
    from pitools.piconfig.resolver import load_pi_config
    from pitools.summarize.config_value import is_command, resolve_config_value

    for name in PI_ENV_KEYS:
        out.add("pi-api-key", env.get(name))
    config = load_pi_config(env)

    def add_config(value: object, extra: Mapping[str, str] | None = None) -> None:
        if not isinstance(value, str):
            return
        if is_command(value):
            out.skipped_commands += 1
            return
        out.add("pi-api-key", resolve_config_value(value, env, extra))

    # A broken file is a note (Pi's policy skips it); the rest is read as Pi reads it.
    out.notes.extend(f"Pi's configuration: {problem}" for problem in config.warnings)
    for credential in config.auth.data.values():
        extra = credential.get("env") if isinstance(credential.get("env"), dict) else None
        if credential.get("type") == "api_key":
            add_config(credential.get("key"), extra)
            for value in (extra or {}).values():
                add_config(value)
        elif credential.get("type") == "oauth":
            for name in ("access", "refresh"):
                out.add("pi-api-key", credential.get(name))
    for provider in _providers_with_keys(config.models):
        add_config(provider.get("apiKey"))
        _headers(provider.get("headers"), add_config)
        models = provider.get("models")
        for model in models if isinstance(models, list) else []:
            if isinstance(model, dict):
                _headers(model.get("headers"), add_config)


def _providers_with_keys(models: Any) -> list[dict[str, Any]]:
    """models.json's provider objects. Pi ignores a file that fails its schema, but the keys in it
    are still the user's secrets: such a file is read leniently here (JSON, any shape)."""
    providers: Any = models.data
    if models.problems and models.read:
        from pitools.errors import ConfigError
        from pitools.piconfig import load_json_file

        try:
            raw = load_json_file(models.path, comments=True)
        except ConfigError:
            raw = None
        providers = raw.get("providers") if isinstance(raw, dict) else None
    if not isinstance(providers, dict):
        return []
    return [p for p in providers.values() if isinstance(p, dict)]


_AUTH_HEADER = re.compile(r"(?i)authorization|api[-_]?key|token|secret|key$")


def _headers(headers: Any, add: Any) -> None:
    """Credential headers only (``anthropic-version: 2023-06-01`` is not a secret)."""
    if isinstance(headers, dict):
        for name, value in headers.items():
            if isinstance(name, str) and _AUTH_HEADER.search(name) and isinstance(value, str):
                add(re.sub(r"(?i)^(?:bearer|basic|token)\s+", "", value))
