"""``export --format otlp|atif``: load a session, pick its branches, build traces or trajectories."""

from __future__ import annotations

from typing import Any

from pitools.core.session.api import LoadedSession


def branch_leaves(loaded: LoadedSession, leaf_ref: str | None, all_: bool) -> list[Any]:
    """The leaf ids to export: every leaf with ``all_``, else the one ``--leaf`` names (or Pi's default)."""
    if all_:
        return list(loaded.index.leaves())
    leaf = loaded.leaf(leaf_ref)
    return [leaf] if leaf is not None else []


def copied_entry_ids(loaded: LoadedSession) -> set[str]:
    """Ids of the entries this session copied from its parent (fork/clone history)."""
    from pitools.core.views.lineage_copied import copied_ids

    return copied_ids(loaded)


def _branches(loaded: LoadedSession, leaf_ref: str | None, all_: bool) -> list[list[Any]]:
    out = []
    for leaf in branch_leaves(loaded, leaf_ref, all_):
        branch = loaded.index.get_branch(leaf)
        if branch:
            out.append(branch)
    return out


def build_traces(loaded: LoadedSession, leaf_ref: str | None, all_: bool) -> list[Any]:
    from pitools.core.views.otel import branch_trace

    header = loaded.session.header or {}
    copied = copied_entry_ids(loaded)
    return [branch_trace(header, b, copied=copied) for b in _branches(loaded, leaf_ref, all_)]


def build_trajectories(loaded: LoadedSession, leaf_ref: str | None, all_: bool) -> list[dict[str, Any]]:
    from pitools.core.views.atif import branch_trajectory

    header = loaded.session.header or {}
    copied = copied_entry_ids(loaded)
    return [branch_trajectory(header, b, copied=copied) for b in _branches(loaded, leaf_ref, all_)]
