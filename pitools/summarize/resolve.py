"""Choosing the summarizer model and resolving its endpoint and credentials the way Pi does.

Model choice, first match wins: the ``--model`` argument (``provider/id``, a bare id or
``builtin``), the session's model, ``defaultProvider``/``defaultModel`` from Pi's merged
settings (the agent directory's ``settings.json``, then the session project's
``.pi/settings.json`` where Pi trusts the project), and finally the offline ``builtin`` summarizer.

Endpoint and limits: ``models.json`` (model entry, then provider, then ``modelOverrides``),
pi-ai's catalogue for well-known models, then the built-in provider table; ``--base-url``
overrides the URL and keeps the model's API, as Pi's ``baseUrl`` override does (Chat Completions
for a model no provider knows). Credentials, in Pi's order (docs/models.md "Authenticate"): an
``auth.json`` API-key entry, ``models.json``'s ``apiKey``, then the provider's environment
variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pydantic import SecretStr, ValidationError

from pitools.core.compaction.settings import DefaultModelSetting
from pitools.errors import ConfigError
from pitools.piconfig.resolver import usable_credential
from pitools.summarize import agent_config, catalog
from pitools.summarize.config_value import (
    env_var_names,
    is_command,
    resolve_config_value,
    resolve_config_value_or_raise,
    resolve_headers_or_raise,
)
from pitools.summarize.errors import MissingApiKeyError, UnsupportedProviderError
from pitools.summarize.providers import (
    ANTHROPIC_AUTH_TOKEN_ENV,
    BUILTIN_PROVIDERS,
    UNSUPPORTED_PROVIDERS,
    BuiltinProvider,
)
from pitools.summarize.types import ModelCost, ModelSpec

BUILTIN = "builtin"
#: Provider name used for ``--base-url`` with a model id that names no known provider.
CUSTOM_PROVIDER = "custom"

#: Pi's defaults for a model that does not declare them (``model-config.ts``).
DEFAULT_CONTEXT_WINDOW = 128000
DEFAULT_MAX_TOKENS = 16384

_OPENAI: Final = "openai-completions"
_ANTHROPIC: Final = "anthropic-messages"
_RESPONSES: Final = "openai-responses"


def builtin_spec() -> ModelSpec:
    """The offline extractive summarizer: no endpoint, no key, no cost."""
    return ModelSpec(provider="pitools", model_id=BUILTIN, api="builtin", context_window=0, max_tokens=0)


def resolve_model(
    model_arg: str | None,
    *,
    session_model: tuple[str, str] | None,
    agent_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    base_url: str | None = None,
    use_config: bool = True,
    run_commands: bool = True,
    default_model: DefaultModelSetting | None = None,
) -> ModelSpec:
    """Resolve the model ``compact --apply`` will call (Pi's model selection and provider auth).

    ``default_model`` is Pi's merged ``defaultProvider``/``defaultModel`` for the session
    (:func:`pitools.core.compaction.settings.resolve_settings`); None reads the agent
    directory's ``settings.json`` alone (no project).

    ``use_config=False`` (``--no-config``) reads no file of the agent directory: no models.json,
    auth.json or settings.json, so no ``!command`` either; keys come from the environment only.
    ``run_commands=False`` resolves everything except ``!command`` values, which are not run
    (for deciding what to ask the user before anything from the configuration executes).
    """
    env = os.environ if env is None else env
    directory = agent_dir if agent_dir is not None else agent_config.agent_dir(env)
    try:
        return _resolve_model(
            model_arg, session_model, directory, env, base_url, use_config, run_commands, default_model
        )
    except ConfigError as exc:
        # Pi's policy skips a broken models.json/auth.json/settings.json: say so when that is why.
        skipped = agent_config.problems(directory) if use_config else []
        if not skipped:
            raise
        raise type(exc)(f"{exc.message} ({'; '.join(skipped)})", path=exc.path, line=exc.line) from None


def _resolve_model(
    model_arg: str | None,
    session_model: tuple[str, str] | None,
    directory: Path,
    env: Mapping[str, str],
    base_url: str | None,
    use_config: bool,
    run_commands: bool,
    default_model: DefaultModelSetting | None,
) -> ModelSpec:
    text = (model_arg or "").strip()
    if text == BUILTIN:
        return builtin_spec()
    models = agent_config.read_models(directory) if use_config else {}
    if text:
        provider, model_id = _parse_reference(text, models, base_url)
    elif session_model is not None and session_model[0] and session_model[1]:
        provider, model_id = session_model
    else:
        if default_model is None:
            default_model = _global_default(directory)
        chosen = _settings_default(default_model, models) if use_config else None
        if chosen is None:
            if base_url:
                raise ConfigError("--base-url needs a model: pass --model <id>")
            return builtin_spec()
        provider, model_id = chosen
    if provider == "pitools" and model_id == BUILTIN:
        return builtin_spec()
    auth = agent_config.read_auth(directory) if use_config else {}
    return _build_spec(
        provider,
        model_id,
        models=models,
        auth=auth,
        env=env,
        directory=directory,
        base_url=base_url,
        run_commands=run_commands,
    )


def _known_providers(models: Mapping[str, Any]) -> set[str]:
    return set(BUILTIN_PROVIDERS) | set(UNSUPPORTED_PROVIDERS) | set(models) | catalog.catalog_providers()


def _parse_reference(text: str, models: Mapping[str, Any], base_url: str | None) -> tuple[str, str]:
    """Split ``provider/id``; model ids may themselves contain ``/`` (``openrouter/org/model``)."""
    lowered = text.lower()
    best: str | None = None
    for provider in _known_providers(models):
        prefix = provider.lower() + "/"
        if lowered.startswith(prefix) and len(text) > len(prefix) and (best is None or len(provider) > len(best)):
            best = provider
    if best is not None:
        return best, text[len(best) + 1 :]
    if base_url:
        # A server of the user's own: the whole text is its model id (it may look like
        # "org/model", as vLLM and Hugging Face ids do).
        return CUSTOM_PROVIDER, text
    if "/" in text:
        provider, _, model_id = text.partition("/")
        return provider, model_id
    for provider, config in models.items():
        if any(m.get("id") == text for m in config.get("models", [])):
            return provider, text
    matches = catalog.providers_of(text)
    if matches:
        return matches[0], text
    raise ConfigError(f"unknown model {text!r}: write it as provider/model (e.g. anthropic/{text})")


def _global_default(directory: Path) -> DefaultModelSetting:
    """``defaultProvider``/``defaultModel`` of the agent directory's ``settings.json`` alone."""
    settings = agent_config.read_settings(directory)
    where = str(directory / "settings.json")
    return DefaultModelSetting(settings.get("defaultProvider"), settings.get("defaultModel"), where, where)


def _settings_default(default: DefaultModelSetting, models: Mapping[str, Any]) -> tuple[str, str] | None:
    provider, model_id = default.provider, default.model
    if provider is not None and not isinstance(provider, str):
        raise ConfigError('"defaultProvider" must be a string', path=default.provider_file)
    if model_id is not None and not isinstance(model_id, str):
        raise ConfigError('"defaultModel" must be a string', path=default.model_file)
    if provider and model_id:
        return provider, model_id
    if provider:
        builtin = BUILTIN_PROVIDERS.get(provider)
        if builtin is None or builtin.default_model is None:
            raise ConfigError(
                f'"defaultProvider" is {provider!r} but no "defaultModel" is set', path=default.provider_file
            )
        return provider, builtin.default_model
    if model_id:
        return _parse_reference(model_id, models, None)
    return None


def _wire(api: str, base_url: str, provider: str) -> tuple[str, str]:
    """Map Pi's API id onto one of the protocols pitools speaks (Pi's own where it can)."""
    url = base_url.rstrip("/")
    if api in (_OPENAI, _ANTHROPIC, _RESPONSES):
        return api, url
    if api == "azure-openai-responses":
        # Chat Completions serves the same models for a single tool-less request.
        return _OPENAI, url
    if api == "mistral-conversations":
        return _OPENAI, url if url.endswith("/v1") else url + "/v1"
    if api == "google-generative-ai" and url.endswith("generativelanguage.googleapis.com/v1beta"):
        return _OPENAI, url + "/openai"
    raise UnsupportedProviderError(
        f"provider {provider!r} uses the {api!r} API, which pitools cannot call; "
        "use --base-url with an OpenAI-compatible endpoint, or --model builtin"
    )


def _merge(*layers: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for layer in layers:
        if layer:
            out.update(layer)
    return out


def _model_metadata(
    provider: str,
    model_id: str,
    config: Mapping[str, Any],
    definition: Mapping[str, Any] | None,
    entry: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Context window, output cap, reasoning, cost, thinking map, compat and raw headers."""
    if definition is not None:
        # A models.json entry with an existing id replaces the built-in model outright.
        meta: dict[str, Any] = {
            "contextWindow": definition.get("contextWindow", DEFAULT_CONTEXT_WINDOW),
            "maxTokens": definition.get("maxTokens", DEFAULT_MAX_TOKENS),
            "reasoning": definition.get("reasoning", False),
            "cost": definition.get("cost"),
            "thinkingLevelMap": definition.get("thinkingLevelMap"),
            "compat": _merge(config.get("compat"), definition.get("compat")),
        }
    elif entry is not None:
        meta = {
            "contextWindow": entry["contextWindow"],
            "maxTokens": entry["maxTokens"],
            "reasoning": entry.get("reasoning", False),
            "cost": entry.get("cost"),
            "thinkingLevelMap": entry.get("thinkingLevelMap"),
            # The full compat pi-ai builds requests with (the catalogue's requestCompat).
            "compat": _merge(entry.get("requestCompat", entry.get("compat")), config.get("compat")),
        }
    else:
        # Unknown to Pi's catalogue and models.json: Pi would refuse it; pitools uses Pi's
        # defaults so any model id on a known endpoint works.
        meta = {
            "contextWindow": DEFAULT_CONTEXT_WINDOW,
            "maxTokens": DEFAULT_MAX_TOKENS,
            "reasoning": False,
            "cost": None,
            "thinkingLevelMap": None,
            "compat": dict(config.get("compat") or {}),
        }
    override = (config.get("modelOverrides") or {}).get(model_id)
    if override:
        for key in ("contextWindow", "maxTokens", "reasoning"):
            if key in override:
                meta[key] = override[key]
        if override.get("thinkingLevelMap"):
            meta["thinkingLevelMap"] = _merge(meta["thinkingLevelMap"], override["thinkingLevelMap"])
        if override.get("cost"):
            meta["cost"] = _merge(meta["cost"], override["cost"])
        meta["compat"] = _merge(meta["compat"], override.get("compat"))
    meta["headers"] = _merge(
        (entry or {}).get("headers"),
        config.get("headers"),
        (override or {}).get("headers"),
        (definition or {}).get("headers"),
    )
    return meta


def _build_spec(
    provider: str,
    model_id: str,
    *,
    models: Mapping[str, dict[str, Any]],
    auth: Mapping[str, dict[str, Any]],
    env: Mapping[str, str],
    directory: Path,
    base_url: str | None,
    run_commands: bool = True,
) -> ModelSpec:
    models_path = str(directory / "models.json")
    config: dict[str, Any] = models.get(provider, {})
    builtin = BUILTIN_PROVIDERS.get(provider)
    if provider in UNSUPPORTED_PROVIDERS and not base_url and not config.get("baseUrl"):
        raise UnsupportedProviderError(
            f"provider {provider!r} is not supported by pitools ({UNSUPPORTED_PROVIDERS[provider]}); "
            "use --base-url with an OpenAI-compatible endpoint, or --model builtin"
        )
    definition = next((m for m in config.get("models", []) if m.get("id") == model_id), None)
    entry = catalog.lookup(provider, model_id)

    api: str | None = (
        (definition or {}).get("api")
        or config.get("api")
        or (entry or {}).get("api")
        or (builtin.api if builtin else None)
    )
    if base_url:
        # Pi's baseUrl override (models.json, "also applies to the provider's built-in models")
        # moves the endpoint and keeps the model's API. A model no provider knows, or one whose
        # API pitools cannot call, goes to an OpenAI-compatible server's Chat Completions.
        api, url = (api if api in (_OPENAI, _ANTHROPIC, _RESPONSES) else _OPENAI), base_url.rstrip("/")
    else:
        raw_url: str | None = (
            (definition or {}).get("baseUrl")
            or config.get("baseUrl")
            or (entry or {}).get("baseUrl")
            or (builtin.base_url if builtin else None)
        )
        if not raw_url:
            raise ConfigError(
                f"unknown provider {provider!r}: add it to {models_path} with a baseUrl and an api, "
                "or pass --base-url for an OpenAI-compatible server"
            )
        if not api:
            raise ConfigError(f'provider "{provider}": no "api" set for model {model_id}', path=models_path)
        api, url = _wire(api, raw_url, provider)

    meta = _model_metadata(provider, model_id, config, definition, entry)
    credential = _resolve_key(provider, config, auth, env, directory, run_commands)
    key = credential.key
    headers = resolve_headers_or_raise(
        meta["headers"],
        f'provider "{provider}"',
        env,
        credential.extra_env,
        path=models_path,
        run_commands=run_commands,
    )
    # Values from a command or a variable are credentials whatever the header is called.
    secret_headers = tuple(name for name, raw in meta["headers"].items() if is_command(raw) or env_var_names(raw))
    if credential.bearer is not None:
        headers["Authorization"] = f"Bearer {credential.bearer}"
    if config.get("authHeader"):
        if key is None:
            raise ConfigError(f'provider "{provider}": authHeader needs an API key', path=models_path)
        headers["Authorization"] = f"Bearer {key}"
    if api == _ANTHROPIC and key is not None and "sk-ant-oat" in key:
        raise UnsupportedProviderError(
            "Anthropic OAuth (Claude subscription) tokens are not supported by pitools; "
            "set ANTHROPIC_API_KEY to an API key"
        )
    if key is not None:
        _check_sendable(key, f"the API key from {credential.source}")
    for name, value in headers.items():
        _check_sendable(value, f'the value of header "{name}"')
    has_auth_header = any(name.lower() in ("authorization", "x-api-key") for name in headers)
    if key is None and not has_auth_header and builtin is not None and not base_url:
        raise MissingApiKeyError(_missing_key_message(provider, builtin, directory, credential.notes))

    try:
        cost = ModelCost.model_validate(meta["cost"]) if meta["cost"] else None
    except ValidationError as exc:
        raise ConfigError(f'model {provider}/{model_id}: invalid "cost": {exc.errors()[0]["msg"]}') from None
    return ModelSpec(
        provider=provider,
        model_id=model_id,
        api="anthropic-messages" if api == _ANTHROPIC else "openai-responses" if api == _RESPONSES else _OPENAI,
        base_url=url,
        api_key=SecretStr(key) if key is not None else None,
        headers=headers,
        context_window=int(meta["contextWindow"]),
        max_tokens=int(meta["maxTokens"]),
        reasoning=bool(meta["reasoning"]),
        cost=cost,
        thinking_level_map=meta["thinkingLevelMap"],
        compat=meta["compat"],
        key_source=credential.source,
        secret_headers=secret_headers,
    )


def _check_sendable(value: str, what: str) -> None:
    """A credential or header value must be printable ASCII (HTTP allows nothing else to be sent as
    is); the message names where it came from, never the value."""
    if any(c in value for c in "\r\n\t"):
        raise ConfigError(
            f"{what} contains a line break or tab (a CRLF file or a trailing newline?); "
            "remove it: pitools does not send it"
        )
    if not value.isascii() or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ConfigError(f"{what} contains non-ASCII or control characters; pitools does not send it")


@dataclass
class _Credential:
    key: str | None = None
    source: str | None = None
    #: A bearer token sent as ``Authorization`` instead of an API key (ANTHROPIC_AUTH_TOKEN).
    bearer: str | None = None
    #: The auth.json credential's ``env`` object, used for ``$NAME`` lookups in headers too.
    extra_env: dict[str, str] | None = None
    notes: list[str] = field(default_factory=list)


def _resolve_key(
    provider: str,
    config: Mapping[str, Any],
    auth: Mapping[str, dict[str, Any]],
    env: Mapping[str, str],
    directory: Path,
    run_commands: bool = True,
) -> _Credential:
    """The provider's credential, from auth.json, then models.json, then the environment."""
    found = _Credential()
    credential = auth.get(provider)
    if credential is not None and not usable_credential(credential):
        raise ConfigError(f'invalid credential for provider "{provider}"', path=str(directory / "auth.json"))
    if credential is not None and credential.get("type") == "api_key":
        found.extra_env = credential.get("env")
        raw = credential.get("key")
        if raw:
            key = resolve_config_value(raw, env, found.extra_env, run_commands=run_commands)
            if key:
                found.key, found.source = key, "auth.json"
                return found
            names = env_var_names(raw)
            why = f"needs {', '.join(names)}" if names else "its command gave no output"
            found.notes.append(f"the auth.json key for {provider!r} could not be resolved ({why})")
    elif credential is not None and credential.get("type") == "oauth":
        found.notes.append(f"auth.json holds an OAuth login for {provider!r}, which pitools cannot use")
    raw_key = config.get("apiKey")
    if raw_key is not None:
        found.key = resolve_config_value_or_raise(
            raw_key,
            f'API key for provider "{provider}"',
            env,
            path=str(directory / "models.json"),
            run_commands=run_commands,
        )
        found.source = "models.json"
        return found
    if provider == "anthropic" and env.get(ANTHROPIC_AUTH_TOKEN_ENV):
        found.bearer, found.source = env[ANTHROPIC_AUTH_TOKEN_ENV], f"env {ANTHROPIC_AUTH_TOKEN_ENV}"
        return found
    builtin = BUILTIN_PROVIDERS.get(provider)
    for name in builtin.env_vars if builtin else ():
        value = env.get(name)
        if value:
            found.key, found.source = value, f"env {name}"
            return found
    return found


def _missing_key_message(provider: str, builtin: BuiltinProvider, directory: Path, notes: list[str]) -> str:
    variables = list(builtin.env_vars)
    if provider == "anthropic":
        variables = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]
    message = (
        f"no API key for provider {provider!r}: set {' or '.join(variables)}, "
        f'add {{"{provider}": {{"type": "api_key", "key": "..."}}}} to {directory / "auth.json"}, '
        f'or set "apiKey" for it in {directory / "models.json"}'
    )
    if notes:
        message += " (" + "; ".join(notes) + ")"
    return message + "; or use --model builtin for an offline summary"
