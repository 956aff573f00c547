"""Helpers of ``pitools dataset`` and ``export --endpoint``: partition names, URLs, family order."""

from __future__ import annotations

import pytest

from pitools.ops.dataset import hive_value, partition_dir
from pitools.ops.otlp_send import traces_url


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("proj", "proj"),
        ("..", "%2E%2E"),
        ("a/b", "a%2Fb"),
        ("", "__HIVE_DEFAULT_PARTITION__"),
        (None, "__HIVE_DEFAULT_PARTITION__"),
        ("x y", "x%20y"),
    ],
)
def test_hive_value_never_names_a_path(text: str | None, expected: str) -> None:
    assert hive_value(text) == expected


def test_partition_dir_and_traces_url() -> None:
    assert partition_dir("day", 1767225600000, None) == "day=2026-01-01"
    assert partition_dir("day", None, None) == "day=__HIVE_DEFAULT_PARTITION__"
    assert partition_dir(None, 1, "p") == ""
    assert len(hive_value("é" * 300)) < 130
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://h:1/custom/path") == "http://h:1/custom/path"


def test_family_order_puts_parents_first_and_survives_loops() -> None:
    from pitools.core.views.lineage import SessionRef
    from pitools.ops.dataset import _family_order

    refs = [SessionRef(k) for k in ("grandchild", "loner", "child", "root", "loop-a", "loop-b")]
    parents: dict[str, str | None] = {
        "grandchild": "child",
        "child": "root",
        "root": None,
        "loner": None,
        "loop-a": "loop-b",
        "loop-b": "loop-a",
    }
    order = [r.key for r in _family_order(refs, parents)]
    assert sorted(order) == sorted(r.key for r in refs)
    assert order.index("root") < order.index("child") < order.index("grandchild")
