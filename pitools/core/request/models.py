"""Which model a ``--model PROVIDER/ID`` names, as pi-ai sees it (catalogue + ``models.json``).

Pure: the caller passes the catalogue records (``pitools/data/model_catalog.jsonl``, generated from
pi-ai's ``dist/providers/data``) and the parsed ``models.json`` of Pi's agent folder (or None).
A ``models.json`` model definition replaces a built-in one with the same id; a provider's
``baseUrl``/``compat``/``headers`` and ``modelOverrides`` apply on top of a built-in model, the
merge order of Pi's model registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pitools.core.request.common import RequestError

DEFAULT_CONTEXT_WINDOW = 128000
DEFAULT_MAX_TOKENS = 16384


def split_reference(ref: str) -> tuple[str, str]:
    """``anthropic/claude-sonnet-4-5`` → (provider, id); the id may hold more slashes."""
    provider, sep, model_id = ref.partition("/")
    if not sep or not provider or not model_id:
        raise RequestError(f"--model {ref!r}: expected PROVIDER/ID, e.g. anthropic/claude-sonnet-4-5")
    return provider, model_id


def _merge(*layers: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for layer in layers:
        if isinstance(layer, Mapping):
            out.update(layer)
    return out


def _from_catalogue(entry: Mapping[str, Any]) -> dict[str, Any]:
    model = {k: v for k, v in entry.items() if k not in ("compat", "requestCompat")}
    compat = entry.get("requestCompat", entry.get("compat"))
    if compat:
        model["compat"] = dict(compat)
    return model


def resolve_request_model(
    ref: str, catalogue: Iterable[Mapping[str, Any]], models_json: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The pi-ai model object for ``ref``; :class:`RequestError` when pitools cannot know it."""
    provider, model_id = split_reference(ref)
    builtin: dict[str, Any] | None = None
    known_provider = False
    for entry in catalogue:
        if entry.get("provider") == provider:
            known_provider = True
            if entry.get("id") == model_id:
                builtin = _from_catalogue(entry)
    providers = (models_json or {}).get("providers") if isinstance(models_json, Mapping) else None
    config = providers.get(provider) if isinstance(providers, Mapping) else None
    config = config if isinstance(config, Mapping) else None
    definition = None
    if config is not None:
        for candidate in config.get("models") or []:
            if isinstance(candidate, Mapping) and candidate.get("id") == model_id:
                definition = candidate
    if definition is not None:
        model: dict[str, Any] = {
            "id": model_id,
            "provider": provider,
            "api": definition.get("api") or config.get("api") or (builtin or {}).get("api"),  # type: ignore[union-attr]
            "baseUrl": definition.get("baseUrl") or config.get("baseUrl") or (builtin or {}).get("baseUrl"),  # type: ignore[union-attr]
            "reasoning": bool(definition.get("reasoning", False)),
            "input": list(definition.get("input") or ["text"]),
            "contextWindow": definition.get("contextWindow", DEFAULT_CONTEXT_WINDOW),
            "maxTokens": definition.get("maxTokens", DEFAULT_MAX_TOKENS),
        }
        if definition.get("thinkingLevelMap"):
            model["thinkingLevelMap"] = dict(definition["thinkingLevelMap"])
        compat = _merge(config.get("compat"), definition.get("compat"))  # type: ignore[union-attr]
        if compat:
            model["compat"] = compat
        headers = _merge(config.get("headers"), definition.get("headers"))  # type: ignore[union-attr]
        if headers:
            model["headers"] = headers
        model["source"] = "models.json"
    elif builtin is not None:
        model = builtin
        model["source"] = "catalogue"
        if config is not None:
            if config.get("baseUrl"):
                model["baseUrl"] = config["baseUrl"]
            compat = _merge(model.get("compat"), config.get("compat"))
            if compat:
                model["compat"] = compat
            headers = _merge(model.get("headers"), config.get("headers"))
            if headers:
                model["headers"] = headers
    else:
        where = "Pi's catalogue" + (" and models.json" if config is not None else "")
        hint = "" if known_provider or config is not None else f" (unknown provider {provider!r})"
        raise RequestError(f"--model {ref}: no such model in {where}{hint}")
    override = (config or {}).get("modelOverrides")
    override = override.get(model_id) if isinstance(override, Mapping) else None
    if isinstance(override, Mapping):
        for key in ("contextWindow", "maxTokens", "reasoning", "input", "api", "baseUrl"):
            if key in override:
                model[key] = override[key]
        for key in ("thinkingLevelMap", "compat", "headers"):
            if override.get(key):
                model[key] = _merge(model.get(key), override[key])
    if not model.get("api"):
        raise RequestError(
            f"--model {ref}: pitools ships no request metadata for provider {provider!r} "
            "(define the model in models.json with its api, or pick a catalogued provider)"
        )
    return model
