"""``export --format atif`` writes ATIF-v1.8: multimodal content parts and the compaction
convention in ``step.extra``, validated with the published models (the ``atif`` package, v1.8).

Expected values are read from the golden session's own lines here, independently of pitools.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import atif
from click.testing import Result

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
SESSION = GOLDEN / "gen-s0005_v3" / "session.jsonl"  # images (user, tool results) and a compaction
Run = Callable[..., Result]


def _branch() -> list[dict[str, Any]]:
    values = [json.loads(line) for line in SESSION.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_id = {v["id"]: v for v in values[1:]}
    out = []
    current: dict[str, Any] | None = by_id[values[-1]["id"]]
    while current is not None:
        out.append(current)
        current = by_id.get(current.get("parentId"))  # type: ignore[arg-type]
    return out[::-1]


def _images(content: Any) -> list[tuple[str, str]]:
    if not isinstance(content, list):
        return []
    return [(b["mimeType"], b["data"]) for b in content if isinstance(b, dict) and b.get("type") == "image"]


def test_atif_v18_validates_with_images_as_content_parts(run: Run) -> None:
    data = json.loads(run("export", str(SESSION), "--format", "atif").stdout)
    trajectory = atif.Trajectory.model_validate(data)
    assert data["schema_version"] == "ATIF-v1.8"
    assert trajectory.has_multimodal_content()
    by_entry = {s["extra"]["pi_entry_id"]: s for s in data["steps"]}
    results = {
        r["extra"]["pi_entry_id"]: r for s in data["steps"] for r in (s.get("observation") or {}).get("results", [])
    }
    seen = 0
    for entry in _branch():
        message = entry.get("message") or {}
        images = _images(message.get("content"))
        if not images:
            continue
        holder = by_entry.get(entry["id"]) if message["role"] != "toolResult" else results.get(entry["id"])
        assert holder is not None, entry["id"]
        parts = holder["message"] if message["role"] != "toolResult" else holder["content"]
        got = [(p["source"]["media_type"], p["source"]["path"]) for p in parts if p["type"] == "image"]
        assert got == [(mime, f"data:{mime};base64,{b64}") for mime, b64 in images]
        texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
        assert [p["text"] for p in parts if p["type"] == "text"] == texts
        seen += len(images)
    assert seen >= 2


def test_atif_images_placeholder_keeps_plain_strings(run: Run) -> None:
    data = json.loads(run("export", str(SESSION), "--format", "atif", "--images", "placeholder").stdout)
    trajectory = atif.Trajectory.model_validate(data)
    assert not trajectory.has_multimodal_content()
    assert any("[image image/" in s["message"] for s in data["steps"])


def test_atif_compaction_convention_in_step_extra(run: Run) -> None:
    data = json.loads(run("export", str(SESSION), "--format", "atif").stdout)
    atif.Trajectory.model_validate(data)
    branch = _branch()
    compactions = [e for e in branch if e["type"] == "compaction"]
    assert compactions
    steps = data["steps"]
    ids_in_order = [e["id"] for e in branch]
    for entry in compactions:
        (step,) = [s for s in steps if s["extra"]["pi_entry_id"] == entry["id"]]
        assert step["source"] == "system" and step["message"] == entry["summary"]
        extra = step["extra"]["compaction"]
        assert extra["summary"] is True
        assert extra["tokens_before"] == entry["tokensBefore"]
        assert extra["pi_first_kept_entry_id"] == entry["firstKeptEntryId"]
        # The first step at or after Pi's first kept entry, on this branch.
        after = ids_in_order[ids_in_order.index(entry["firstKeptEntryId"]) :]
        first = next(s for s in steps if s["extra"]["pi_entry_id"] in after)
        assert extra["kept_from_step_id"] == first["step_id"] < step["step_id"]


def test_atif_v18_all_branches_validate(run: Run) -> None:
    data = json.loads(run("export", str(SESSION), "--format", "atif", "--all").stdout)
    for item in data:
        assert atif.Trajectory.model_validate(item).schema_version == "ATIF-v1.8"
