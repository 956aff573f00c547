"""core/js/ops.py's coercions against what node answers (recorded in fixtures/js_ops.json).

Re-record with ``TZ=UTC node tests/unit/js/js_ops.mjs > tests/unit/js/fixtures/js_ops.json``;
when node is on the machine the test also compares a live run with the recording.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js import ops as jsops
from pitools.core.js.value import UNDEFINED, js_number_to_string
from pitools.errors import PiCrashError
from tests.support import node

HERE = Path(__file__).resolve().parent
FIXTURE = json.loads((HERE / "fixtures" / "js_ops.json").read_text(encoding="utf-8"))


def _value(text: str) -> Any:
    return UNDEFINED if text == "undefined" else json.loads(text)


def _num(x: Any) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    return js_number_to_string(x) if type(x) in (int, float) else jsops.to_string(x)


@pytest.mark.parametrize("rec", FIXTURE["values"], ids=lambda r: r["text"])
def test_single_value_coercions(rec: dict[str, Any]) -> None:
    v = _value(rec["text"])
    assert jsops.to_string(v) == rec["string"]
    assert _num(jsops.to_number(v)) == rec["number"]
    assert jsops.gt_zero(v) is rec["gtZero"]
    assert jsops.join([v, None, UNDEFINED, v], "|") == rec["joined"]
    if type(v) in (int, float):
        assert _num(jsops.ceil_div4(v)) == rec["ceilDiv4"]


@pytest.mark.parametrize("rec", FIXTURE["pairs"], ids=lambda r: f"{r['a']} {r['b']}")
def test_pairs(rec: dict[str, Any]) -> None:
    a, b = _value(rec["a"]), _value(rec["b"])
    assert jsops.strict_equal(a, b) is rec["strictEqual"]
    assert _num(jsops.add(a, b)) == rec["add"]


def test_prop_on_nullish_throws_like_v8() -> None:
    with pytest.raises(PiCrashError, match=r"Cannot read properties of null \(reading 'role'\)"):
        jsops.prop(None, "role")
    with pytest.raises(PiCrashError, match="undefined"):
        jsops.prop(UNDEFINED, "x")
    assert jsops.prop("abc", "length") == 3 and jsops.prop([1, 2], "length") == 2
    assert jsops.prop({"a": 1}, "b") is UNDEFINED


def test_is_blank_trims_what_javascript_trims() -> None:
    """``text.trim() === ""`` on every UTF-16 code unit, against node's list: Python's ``\\s`` also
    counts U+001C-U+001F and U+0085, which JavaScript keeps (a thinking block of them is sent)."""
    trimmed = set(FIXTURE["trimmed"])
    assert [u for u in range(0x10000) if jsops.is_blank(chr(u)) != (u in trimmed)] == []
    assert jsops.is_blank("") and jsops.is_blank(" \t\u3000") and not jsops.is_blank("\x1c")
    assert not jsops.is_blank(None) and not jsops.is_blank(["  "])


def test_fixture_is_what_node_says_now() -> None:
    exe = node()
    if exe is None:
        pytest.skip("node is not installed; the recording is used")
    done = subprocess.run(
        [exe, str(HERE / "js_ops.mjs")], capture_output=True, text=True, check=True, env={**os.environ, "TZ": "UTC"}
    )
    live = json.loads(done.stdout)
    assert {k: v for k, v in live.items() if k != "node"} == {k: v for k, v in FIXTURE.items() if k != "node"}
