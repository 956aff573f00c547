"""Lookup in the bundled copy of pi-ai's model catalogue (see ``catalog_build.py``)."""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson


@cache
def _index() -> dict[tuple[str, str], dict[str, Any]]:
    from pitools.summarize._catalog_data import CATALOG_JSONL

    index: dict[tuple[str, str], dict[str, Any]] = {}
    for line in CATALOG_JSONL.splitlines():
        if line.strip():
            model = orjson.loads(line)
            index[(model["provider"], model["id"])] = model
    return index


def lookup(provider: str, model_id: str) -> dict[str, Any] | None:
    """The catalogue entry for ``provider/model_id`` (Pi's field names), or None."""
    return _index().get((provider, model_id))


def providers_of(model_id: str) -> list[str]:
    """Catalogue providers that list a model with exactly this id, in catalogue order."""
    return [p for (p, mid) in _index() if mid == model_id]


def catalog_providers() -> set[str]:
    """Every provider that has at least one catalogue entry."""
    return {p for (p, _mid) in _index()}
