"""Lookup in the bundled copy of pi-ai's model catalogue (``pitools.piconfig.catalog``)."""

from __future__ import annotations

from typing import Any


def _index() -> dict[tuple[str, str], dict[str, Any]]:
    from pitools.piconfig.catalog import summarizer_index

    return summarizer_index()


def lookup(provider: str, model_id: str) -> dict[str, Any] | None:
    """The catalogue entry for ``provider/model_id`` (Pi's field names), or None."""
    return _index().get((provider, model_id))


def providers_of(model_id: str) -> list[str]:
    """Catalogue providers that list a model with exactly this id, in catalogue order."""
    return [p for (p, mid) in _index() if mid == model_id]


def catalog_providers() -> set[str]:
    """Every provider that has at least one catalogue entry."""
    return {p for (p, _mid) in _index()}
