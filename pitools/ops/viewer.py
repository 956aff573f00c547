"""The session viewer page for one session (``export --format html`` and ``pitools serve``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pitools.core.session.api import LoadedSession


def settings_resolver(loaded: LoadedSession, *, use_config: bool = True) -> Any:
    """``(provider, modelId) | None`` → (compaction settings, context window), resolved as
    ``compact --dry-run`` resolves them (Pi's settings files, the model catalogue), once per model."""
    from pitools.core.compaction.settings import resolve_settings

    header = loaded.session.header or {}
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    seen: dict[Any, Any] = {}

    def settings_for(model: Any) -> Any:
        if model not in seen:
            resolved = resolve_settings(
                session_cwd=cwd,
                model=model,
                flags={"keep_recent_tokens": None, "reserve_tokens": None, "context_window": None},
                use_config=use_config,
            )
            seen[model] = (resolved.compaction_settings(), int(resolved.context_window.value))
        return seen[model]

    return settings_for


def raw_line_reader(loaded: LoadedSession) -> Any:
    """``i`` → the bytes of entry ``i``'s line in the file, when the entries are the file's own
    (not migrated): the form of an entry nested too deeply to serialize again."""
    session = loaded.session
    if session.needs_migration or session.migrated_values is not None:
        return None
    lengths = session.raw.lengths

    def read(i: int) -> bytes | None:
        try:
            with open(session.path, "rb") as f:
                f.seek(session.offsets[i])
                return f.read(lengths[session.positions[i]])
        except (OSError, IndexError):
            return None

    return read


def without_image_data(entries: Iterable[Any]) -> Iterator[Any]:
    """The entries with the base64 data of message images left out (``--images placeholder``)."""
    for entry in entries:
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if (
            isinstance(message, dict)
            and isinstance(content, list)
            and any(isinstance(c, dict) and c.get("type") == "image" for c in content)
        ):
            slim = [
                {k: v for k, v in c.items() if k != "data"} if isinstance(c, dict) and c.get("type") == "image" else c
                for c in content
            ]
            entry = {**entry, "message": {**message, "content": slim}}
        yield entry


def viewer_page(
    loaded: LoadedSession,
    leaf: Any,
    *,
    live: dict[str, Any] | None = None,
    use_config: bool = True,
    embed_images: bool = True,
) -> Iterator[str]:
    """The page's pieces: the read model is computed first, the entries serialized as written."""
    from pitools.core.views.viewer import build_viewer_model
    from pitools.render.viewer_html import page_pieces

    model = build_viewer_model(loaded, leaf, settings_resolver(loaded, use_config=use_config))
    header = loaded.session.header or {}
    name = header.get("id") if isinstance(header.get("id"), str) else loaded.path
    entries: Iterable[Any] = loaded.session.entries
    if not embed_images:
        entries = without_image_data(entries)
    return page_pieces(
        model.meta_json(), entries, title=f"pi session {name}", live=live, raw_line=raw_line_reader(loaded)
    )
