"""Pi 1.6.0's built-in model catalogue, as pitools ships it (``pitools/data/model_catalog.jsonl``).

One generated file (``scripts/gen_catalog.py``, run by ``make generate``) serves both readers:
settings resolution takes each chat model's context window and output cap; the summarizer
takes the full records of the providers it supports.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import orjson


@cache
def _read() -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    text = (resources.files("pitools") / "data" / "model_catalog.jsonl").read_bytes()
    lines = [orjson.loads(line) for line in text.splitlines() if line.strip()]
    return lines[0], tuple(lines[1:])


def catalog_header() -> dict[str, Any]:
    """Line 1: ``source``, ``generatedAt``, ``providers`` (all built-in ones), ``summarizerProviders``."""
    return _read()[0]


@cache
def model_limits_table() -> dict[str, Any]:
    """``{"generatedAt", "providers": {provider: {modelId: [contextWindow, maxTokens]}}}`` in file order.

    A later duplicate id replaces an earlier one, as ``flattenChatModelCatalog`` does.
    """
    providers: dict[str, dict[str, list[Any]]] = {p: {} for p in catalog_header()["providers"]}
    for model in _read()[1]:
        providers.setdefault(model["provider"], {})[model["id"]] = [model["contextWindow"], model["maxTokens"]]
    return {"generatedAt": catalog_header()["generatedAt"], "providers": providers}


@cache
def summarizer_index() -> dict[tuple[str, str], dict[str, Any]]:
    """(provider, id) → full record for the summarizer's providers, in their listed order, ids sorted."""
    by_provider: dict[str, list[dict[str, Any]]] = {}
    for model in _read()[1]:
        by_provider.setdefault(model["provider"], []).append(model)
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for provider in catalog_header()["summarizerProviders"]:
        for model in sorted(by_provider.get(provider, []), key=lambda m: str(m["id"])):
            index[(provider, model["id"])] = model
    return index


def chat_models() -> tuple[dict[str, Any], ...]:
    """Every catalogued chat model record, in file order (``pitools request`` resolves ``--model`` in it)."""
    return _read()[1]
