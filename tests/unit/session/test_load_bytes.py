"""The one loader on bytes in memory (``load(data)``): the same session as ``load(path)``, and
the "skeleton" keep policy ``repair``'s check uses."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import load
from pitools.core.session.migrate import MigrationError
from pitools.errors import SessionParseError
from tests import support

GOLDEN = sorted(support.GOLDEN.glob("*/session.jsonl"))


def _outcome(fn: object) -> object:
    try:
        return fn()  # type: ignore[operator]
    except (SessionParseError, MigrationError) as exc:
        return type(exc).__name__


@pytest.mark.parametrize("path", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_bytes_load_as_the_file_does(path: Path) -> None:
    from_file = _outcome(lambda: load(path))
    from_bytes = _outcome(lambda: load(path.read_bytes(), name=str(path)))
    skeleton = _outcome(lambda: load(path.read_bytes(), name=str(path), keep="skeleton"))
    if isinstance(from_file, str):
        assert from_bytes == skeleton == from_file  # rejected or unmigratable all the same
        return
    assert not isinstance(from_bytes, str) and not isinstance(skeleton, str)
    assert from_bytes.session.offsets == from_file.session.offsets  # type: ignore[attr-defined]
    with contextlib.suppress(RecursionError):  # hostile-deep-nesting: too deep for ==
        assert from_bytes.session.entries == from_file.session.entries  # type: ignore[attr-defined]
    assert from_bytes.session.lines == skeleton.session.lines == from_file.session.lines  # type: ignore[attr-defined]
    assert from_bytes.session.diagnostics == skeleton.session.diagnostics  # type: ignore[attr-defined]
    assert skeleton.index.leaves() == from_bytes.index.leaves()
    assert skeleton.index.leaf_id == from_bytes.index.leaf_id
    for full, skel in zip(from_bytes.session.entries, skeleton.session.entries, strict=True):
        if type(full) is not dict or full.get("type") == "compaction":
            with contextlib.suppress(RecursionError):
                assert skel == full  # kept whole
            continue
        assert skel == {k: full[k] for k in ("type", "id", "parentId") if k in full}
        assert skel.get("type", UNDEFINED) == full.get("type", UNDEFINED)
