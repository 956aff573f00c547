"""Resolve a user's ``--leaf`` reference (id, unique id prefix, or label) to an entry id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.js.value import UNDEFINED
from pitools.core.session.tree import labels_by_id
from pitools.errors import LeafError

if TYPE_CHECKING:
    from pitools.core.session.index import EntryIndex


def resolve_leaf(index: EntryIndex, ref: str | None, *, path: str | None = None) -> Any:
    """The entry id ``ref`` names; ``None`` means Pi's default leaf (the last entry's id).

    Unlike Pi, which silently falls back to the last entry for an unknown id, an unknown or
    ambiguous reference is an error.
    """
    if ref is None:
        return index.leaf_id
    if index.has(ref):
        return ref
    if not ref:  # every id starts with '': naming nothing, not ambiguous
        raise LeafError("--leaf '' is empty: give an entry id, a unique id prefix, a label or L<line>", path=path)
    ids = [k for k in index.pos_by_id if type(k) is str]
    matches = [k for k in ids if k.startswith(ref)]
    labelled = [k for k, (label, _ts) in labels_by_id(index.label_entries()).items() if label == ref and type(k) is str]
    candidates = list(dict.fromkeys(matches + labelled))
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise LeafError(
            f"--leaf {ref!r} matches no entry id, id prefix or label "
            "(Pi itself would silently fall back to the last entry)",
            path=path,
        )
    shown = ", ".join(candidates[:6]) + (" …" if len(candidates) > 6 else "")
    raise LeafError(f"--leaf {ref!r} is ambiguous: it matches {shown}", path=path)


def default_leaf_text(leaf_id: Any) -> str:
    return "(no id)" if leaf_id is UNDEFINED or leaf_id is None else str(leaf_id)
