"""``pitools.core.js.types`` says what the JSON codec returns, and mypy holds ops/render to it.

The aliases are static only, so the test is on data: every value the one line parser returns for
every golden session line (hostile, legacy and broken cases included) is a ``JsonValue``, and
nothing parsed is JS ``undefined`` (which ``JsValue`` adds for property reads).
"""

from __future__ import annotations

import tomllib

import pytest

from pitools.core.js.json.parse import parse_json_line
from pitools.core.js.value import UNDEFINED
from tests.support import ROOT, golden_cases, golden_session

#: The runtime types a ``JsonValue`` node may have (``bool`` before ``int``: it is a subclass).
JSON_NODE_TYPES = (type(None), bool, int, float, str, list, dict)


def _non_json_nodes(value: object) -> list[str]:
    """Where ``value`` holds something ``JsonValue`` does not describe (iteratively: golden lines
    nest deeper than the recursion limit)."""
    bad: list[str] = []
    stack: list[tuple[object, str]] = [(value, "$")]
    while stack:
        node, where = stack.pop()
        if type(node) not in JSON_NODE_TYPES or node is UNDEFINED:
            bad.append(f"{where}: {type(node).__name__}")
        elif type(node) is list:
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(node))
        elif type(node) is dict:
            for key, item in node.items():
                if type(key) is not str:
                    bad.append(f"{where}: key {key!r}")
                stack.append((item, f"{where}.{key}"))
    return bad


@pytest.mark.parametrize("case", golden_cases())
def test_parsed_lines_are_json_values(case: str) -> None:
    for lineno, line in enumerate(golden_session(case).read_bytes().splitlines(), 1):
        try:
            value, _replaced = parse_json_line(line)
        except ValueError:
            continue  # not JSON: the loader reports it, nothing is typed
        assert _non_json_nodes(value) == [], f"{case} line {lineno}"


#: What ``mypy --strict`` turns on per module (``warn_unused_configs`` and ``warn_redundant_casts``
#: are global; the latter is set in ``[tool.mypy]``).
STRICT_FLAGS = {
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_calls",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "check_untyped_defs",
    "disallow_untyped_decorators",
    "warn_return_any",
    "no_implicit_reexport",
    "strict_equality",
    "extra_checks",
}


@pytest.mark.parametrize("package", ["pitools.ops.*", "pitools.render.*", "pitools.core.views.*"])
def test_strict_packages_keep_every_strict_flag(package: str) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config.get("warn_redundant_casts") is True
    sections = [o for o in config["overrides"] if package in o["module"]]
    assert len(sections) == 1, f"one override section names {package}"
    assert {flag for flag in STRICT_FLAGS if sections[0].get(flag) is True} == STRICT_FLAGS
