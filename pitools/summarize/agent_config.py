"""Reading Pi's own configuration files from the agent directory (read-only).

* ``settings.json``: ``defaultProvider`` / ``defaultModel``;
* ``models.json``: ``providers`` with ``baseUrl``, ``api``, ``apiKey``, ``headers``,
  ``authHeader``, ``compat``, ``models`` and ``modelOverrides``. Like Pi, ``//`` line
  comments and trailing commas are accepted;
* ``auth.json``: per-provider credentials; only ``{"type": "api_key", "key", "env"}`` entries
  are usable by pitools, OAuth logins are reported as unsupported.

A missing file is the same as an empty one; an unreadable or malformed file is a
``ConfigError`` naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pitools import piconfig
from pitools.errors import ConfigError

AGENT_DIR_ENV = piconfig.ENV_AGENT_DIR


def agent_dir(env: Mapping[str, str]) -> Path:
    """Pi's ``getAgentDir`` (absolute): the same folder settings and session discovery use."""
    return Path(piconfig.agent_dir_resolved(env))


def _read_json(path: Path, *, lenient: bool = False) -> dict[str, Any]:
    # models.json is JSONC for Pi; the other files are plain JSON.
    return piconfig.read_json_object(path, comments=lenient)


def read_settings(directory: Path) -> dict[str, Any]:
    """The global ``settings.json`` (project settings are not consulted)."""
    return _read_json(directory / "settings.json")


def read_models(directory: Path) -> dict[str, dict[str, Any]]:
    """``models.json``'s ``providers`` object, checked for the fields pitools reads."""
    path = directory / "models.json"
    data = _read_json(path, lenient=True)
    if not data:
        return {}
    providers = data.get("providers")
    if not isinstance(providers, dict):
        raise ConfigError('expected a "providers" object', path=str(path))
    for provider_id, config in providers.items():
        where = f'provider "{provider_id}"'
        if not isinstance(config, dict):
            raise ConfigError(f"{where}: expected an object", path=str(path))
        for key in ("baseUrl", "api", "apiKey"):
            if key in config and not isinstance(config[key], str):
                raise ConfigError(f'{where}: "{key}" must be a string', path=str(path))
        _check_headers(config.get("headers"), where, path)
        models = config.get("models", [])
        if not isinstance(models, list):
            raise ConfigError(f'{where}: "models" must be a list', path=str(path))
        for model in models:
            if not isinstance(model, dict) or not isinstance(model.get("id"), str):
                raise ConfigError(f'{where}: every model needs a string "id"', path=str(path))
            _check_model_fields(model, f"{where}, model {model['id']}", path)
        overrides = config.get("modelOverrides", {})
        if not isinstance(overrides, dict):
            raise ConfigError(f'{where}: "modelOverrides" must be an object', path=str(path))
        for model_id, override in overrides.items():
            if not isinstance(override, dict):
                raise ConfigError(f"{where}: override {model_id} must be an object", path=str(path))
            _check_model_fields(override, f"{where}, override {model_id}", path)
    return providers


def _check_headers(headers: object, where: str, path: Path) -> None:
    if headers is None:
        return
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ConfigError(f'{where}: "headers" must map names to strings', path=str(path))


def _check_model_fields(model: dict[str, Any], where: str, path: Path) -> None:
    for key in ("contextWindow", "maxTokens"):
        value = model.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise ConfigError(f"{where}: invalid {key}", path=str(path))
    if "reasoning" in model and not isinstance(model["reasoning"], bool):
        raise ConfigError(f'{where}: "reasoning" must be true or false', path=str(path))
    if "cost" in model and not isinstance(model["cost"], dict):
        raise ConfigError(f'{where}: "cost" must be an object', path=str(path))
    _check_headers(model.get("headers"), where, path)


def read_auth(directory: Path) -> dict[str, dict[str, Any]]:
    """``auth.json``: provider id → credential object, validated like Pi's reader."""
    path = directory / "auth.json"
    data = _read_json(path)
    for provider_id, credential in data.items():
        if not isinstance(credential, dict):
            raise ConfigError(f'invalid credential for provider "{provider_id}"', path=str(path))
        kind = credential.get("type")
        if kind == "api_key":
            key = credential.get("key")
            env = credential.get("env")
            key_ok = key is None or isinstance(key, str)
            env_ok = env is None or (isinstance(env, dict) and all(isinstance(v, str) for v in env.values()))
            if key_ok and env_ok:
                continue
        elif kind == "oauth":
            continue
        raise ConfigError(f'invalid credential for provider "{provider_id}"', path=str(path))
    return data
