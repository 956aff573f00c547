"""The viewer's text of an id or kind value: JavaScript's ``String`` for scalars (expected values
printed by node's ``String(v)``), JSON text for arrays and objects."""

from __future__ import annotations

from typing import Any

import pytest

from pitools.core.js.value import UNDEFINED
from pitools.core.views.viewer import _js_string


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e21, "1e+21"),
        (0.1, "0.1"),
        (-0.0, "0"),
        (100, "100"),
        (1.5e-7, "1.5e-7"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (float("inf"), "Infinity"),  # JSON.parse("1e400") in the page
        (UNDEFINED, "undefined"),
        ("x", "x"),
    ],
)
def test_scalars_are_javascript_strings(value: Any, expected: str) -> None:
    assert _js_string(value) == expected


def test_arrays_and_objects_are_their_json_text() -> None:
    assert _js_string({"b": 1, "2": "é"}) == '{"2":"é","b":1}'
    assert _js_string([1, None, "a"]) == '[1,null,"a"]'
