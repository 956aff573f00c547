"""OTLP/JSON and ATIF written a span or a step at a time are the whole documents' bytes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.encode import indent_json, to_json_bytes
from pitools.core.session.load import load
from pitools.errors import PitoolsError
from pitools.ops import traces as ops
from pitools.render.export_atif import atif_chunks
from tests import support

pytest.importorskip("opentelemetry.proto")

from pitools.render.export_otlp import otlp_json, otlp_json_chunks, otlp_request

CASES = sorted(p for p in support.GOLDEN.glob("*/session.jsonl") if not p.parent.name.startswith("broken-"))


def _loaded(path: Path) -> object:
    try:
        return load(path)
    except Exception:  # sessions Pi rejects have nothing to export
        return None


@pytest.mark.parametrize("path", support.fast_sample(CASES, 6), ids=lambda p: p.parent.name)
def test_streamed_documents_are_the_whole_documents(path: Path) -> None:
    loaded = _loaded(path)
    if loaded is None:
        pytest.skip("Pi would not load this session")
    for all_ in (False, True):
        try:
            trajectories = ops.build_trajectories(loaded, None, all_)  # type: ignore[arg-type]
        except PitoolsError:  # a parentId cycle: the export refuses it
            continue
        if trajectories or all_:
            value = trajectories[0] if not all_ else trajectories
            whole = indent_json(to_json_bytes(value)) + b"\n"
            assert b"".join(atif_chunks(trajectories, single=not all_)) == whole
        traces = ops.build_traces(loaded, None, all_)  # type: ignore[arg-type]
        whole = to_json_bytes(otlp_json(otlp_request(traces))) + b"\n"
        assert b"".join(otlp_json_chunks(traces)) == whole


def test_no_traces_at_all() -> None:
    assert b"".join(otlp_json_chunks([])) == to_json_bytes(otlp_json(otlp_request([]))) + b"\n"
    assert b"".join(atif_chunks([], single=False)) == b"[]\n"


def test_fresh_strings_are_equal_new_strings() -> None:
    from pitools.render.export_atif import _fresh_strings

    texts = ["ascii", "déjà vu", "a\ud83d\ude00b\udfff😀", ""]  # (one-character strings are shared singletons)
    value = {"a": texts, "b": {"c": [texts[1]]}, "n": 1, "deep": [[[[[[[["é"]]]]]]]]}
    fresh = _fresh_strings(value, 6)
    assert fresh == value
    assert fresh["a"][0] is texts[0]  # ASCII strings keep no UTF-8 copy: left as they are
    assert fresh["a"][1] is not texts[1] and fresh["a"][2] is not texts[2]
    assert fresh["b"]["c"][0] is not texts[1]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.parent.name)
def test_lazy_branches_write_the_same_documents(path: Path) -> None:
    from pitools.core.views.atif import branch_trajectories
    from pitools.core.views.otel import branch_traces

    loaded = _loaded(path)
    if loaded is None:
        pytest.skip("Pi would not load this session")
    try:
        branches = ops._branches(loaded, None, True)  # type: ignore[arg-type]
    except PitoolsError:  # a parentId cycle: the export refuses it
        pytest.skip("the export refuses this tree")
    header = loaded.session.header or {}  # type: ignore[attr-defined]
    copied = ops.copied_entry_ids(loaded)  # type: ignore[arg-type]
    whole = b"".join(atif_chunks(ops.build_trajectories(loaded, None, True), single=False))  # type: ignore[arg-type]
    lazy = atif_chunks(branch_trajectories(header, iter(branches), copied=copied), single=False, release=True)
    assert b"".join(lazy) == whole
    whole = b"".join(otlp_json_chunks(ops.build_traces(loaded, None, True)))  # type: ignore[arg-type]
    assert b"".join(otlp_json_chunks(branch_traces(header, iter(branches), copied=copied))) == whole


def _counting(items: list[Any], made: list[int]) -> Iterator[Any]:
    for item in items:
        made.append(1)
        yield item


def test_lazy_traces_are_made_one_at_a_time() -> None:
    """The next branch's trace or trajectory is asked for only after the previous is written."""
    from pitools.core.views.atif import branch_trajectory
    from pitools.core.views.otel import branch_trace

    loaded = load(CASES[0])
    header = loaded.session.header or {}
    branch = loaded.index.get_branch(loaded.leaf(None))
    traces = [branch_trace(header, branch)] * 3
    made: list[int] = []
    seen = [len(made) for _ in otlp_json_chunks(_counting(traces, made))]
    assert seen[0] == 1 and seen[-1] == 3 and 2 in seen  # the second was made after some spans were out
    trajectories = [branch_trajectory(header, branch)] * 3
    made.clear()
    seen = [len(made) for _ in atif_chunks(_counting(trajectories, made), single=False)]
    assert seen[0] == 1 and seen[-1] == 3 and 2 in seen
