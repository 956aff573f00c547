"""Pi's config value syntax ($NAME, ${NAME}, $$, $!, !command) and JSON comment stripping."""

from __future__ import annotations

import os

import pytest

from pitools.errors import ConfigError
from pitools.piconfig import strip_json_comments
from pitools.summarize.config_value import (
    env_var_names,
    resolve_config_value,
    resolve_config_value_or_raise,
)

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "A": "alpha", "B_2": "beta", "EMPTY": ""}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("literal", "literal"),
        ("$A", "alpha"),
        ("${A}", "alpha"),
        ("x-$A-y", "x-alpha-y"),
        ("$B_2.suffix", "beta.suffix"),
        ("${A}${B_2}", "alphabeta"),
        ("$$A", "$A"),
        ("$!cmd", "!cmd"),
        ("cost $5", "cost $5"),
        ("${not valid}", "${not valid}"),
        ("${A", "${A"),
        ("trailing $", "trailing $"),
        ("", ""),
    ],
)
def test_template_values(value: str, expected: str) -> None:
    assert resolve_config_value(value, ENV) == expected


@pytest.mark.parametrize("value", ["$MISSING", "${MISSING}", "pre-$A-$MISSING", "$EMPTY"])
def test_missing_or_empty_variables_leave_the_value_unresolved(value: str) -> None:
    assert resolve_config_value(value, ENV) is None


def test_extra_env_wins() -> None:
    assert resolve_config_value("$A", ENV, {"A": "own"}) == "own"
    assert resolve_config_value("$ONLY", ENV, {"ONLY": "x"}) == "x"


def test_commands() -> None:
    assert resolve_config_value("!printf '  out  \\n'", ENV) == "out"
    assert resolve_config_value("!echo $A", ENV) == "alpha"  # the shell expands it
    assert resolve_config_value("!exit 3", ENV) is None
    assert resolve_config_value("!true", ENV) is None  # empty output


def test_env_var_names() -> None:
    assert env_var_names("$A-${B}-$A $$C") == ["A", "B"]
    assert env_var_names("!echo $A") == []


def test_or_raise_messages() -> None:
    with pytest.raises(ConfigError, match="environment variable MISSING is not set"):
        resolve_config_value_or_raise("$MISSING", "API key", ENV)
    with pytest.raises(ConfigError, match="variables M1, M2 are not set"):
        resolve_config_value_or_raise("$M1$M2", "API key", ENV)
    with pytest.raises(ConfigError, match="from shell command: exit 1"):
        resolve_config_value_or_raise("!exit 1", "API key", ENV)


def test_strip_json_comments() -> None:
    text = '{"a": "http://x//y", // comment\n "b": [1, 2,], }'
    assert strip_json_comments(text) == '{"a": "http://x//y", \n "b": [1, 2] }'
