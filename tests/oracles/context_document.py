"""``pitools context --format json``'s document built as one dict: kept only as a test oracle.

Production writes the document in pieces (``pitools/render/context.py``:
``context_json_chunks``, each message serialized once, released as it goes); this is the plain
form it must match byte for byte once ``to_json_bytes`` serializes it (plus a newline), written
from the schema (``schemas/output/context.schema.json``) rather than from the streaming code.
Tests that want the document as values parse the streamed bytes; nothing in ``pitools/``
imports this module.
"""

from __future__ import annotations

from typing import Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.context.build import ContextReplay
from pitools.core.js.access import entry_id
from pitools.core.js.value import UNDEFINED


def context_json(replay: ContextReplay, counts: list[int] | None = None) -> dict[str, Any]:
    """The document as values: every message under its projected entry and again in ``messages``."""
    p = replay.projection
    projection = []
    at = 0
    for pe in p.entries:
        n = len(pe.messages)
        projection.append({"sourceId": pe.source_id, "sourceType": pe.source_type, "messages": p.messages[at : at + n]})
        at += n
    doc: dict[str, Any] = {
        "pi": PI_REFERENCE_VERSION,
        "leafId": None if replay.leaf_id is UNDEFINED else replay.leaf_id,
        "path": replay.path_ids if replay.path_ids is not None else [entry_id(e) for e in replay.path],
        "contextEntries": [entry_id(e) for e in replay.context_entries],
        "projection": projection,
        "messages": list(p.messages),
        "thinkingLevel": p.thinking_level,
        "model": p.model,
        "tokenEstimates": replay.shown_estimates,
        "estimatedContextTokens": (
            replay.estimate.to_json()
            if replay.estimate_error is None
            else dict.fromkeys(("tokens", "usageTokens", "trailingTokens", "lastUsageIndex"))
        ),
    }
    if counts is not None:
        doc["tiktokenCounts"] = counts
    errors = {}
    if replay.estimates_error is not None:
        errors["tokenEstimates"] = replay.estimates_error.message
    if replay.estimate_error is not None:
        errors["estimatedContextTokens"] = replay.estimate_error.message
    if errors:
        doc["piErrors"] = errors
    return doc
