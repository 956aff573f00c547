"""The session viewer page for one session (``export --format html`` and ``pitools serve``)."""

from __future__ import annotations

from collections.abc import Iterator
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


def viewer_page(
    loaded: LoadedSession, leaf: Any, *, live: dict[str, Any] | None = None, use_config: bool = True
) -> Iterator[str]:
    """The page's pieces: the read model is computed first, the entries serialized as written."""
    from pitools.core.views.viewer import build_viewer_model
    from pitools.render.viewer_html import page_pieces

    model = build_viewer_model(loaded, leaf, settings_resolver(loaded, use_config=use_config))
    header = loaded.session.header or {}
    name = header.get("id") if isinstance(header.get("id"), str) else loaded.path
    return page_pieces(model.meta_json(), loaded.session.entries, title=f"pi session {name}", live=live)
