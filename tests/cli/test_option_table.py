"""Every command's parameters against its ``--help``, the archive commands' option tables against
their click command, and ``search``'s against the warm search's click-free reading too: a
default, a choice or an option changed in one place and not the other fails here."""

from __future__ import annotations

from typing import Any

import click
import pytest

from pitools.cli import COMMANDS
from pitools.cli.archive_options import ARCHIVE_COMMANDS, Param, table
from pitools.cli.fast_search import parse as warm_parse


def parse(name: str, args: list[str]) -> dict[str, Any] | None:
    assert name == "search"  # the one command read without click
    return warm_parse(args)


# A value each kind of option accepts, for the parse-both-ways checks.
_SAMPLE_VALUE = {"--limit": "7", "--timezone": "UTC", "--since": "2026-03-01", "--until": "2026-03-02"}


def _command(name: str) -> click.Command:
    from pitools.cli.app import cli

    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


def _click_values(name: str, args: list[str]) -> dict[str, Any]:
    """What click hands the command for ``args`` (its parameters, output options left out)."""
    command = _command(name)
    with command.make_context(name, list(args)) as ctx:
        return dict(ctx.params)


def _required(name: str) -> list[str]:
    return ["needle"] if any(p.kind == "argument" for p in table(name)) else []


@pytest.mark.parametrize("name", ARCHIVE_COMMANDS)
def test_the_click_command_is_made_from_the_table(name: str) -> None:
    own = [p for p in _command(name).params if p.name not in ("color", "width", "debug")]
    params = table(name)
    assert [(p.name, p.opts[0] if isinstance(p, click.Option) else p.name) for p in own] == [
        (p.dest, p.name if p.kind != "argument" else p.dest) for p in params
    ]
    for mine, theirs in zip(params, own, strict=True):
        if isinstance(theirs.type, click.Choice):
            assert tuple(theirs.type.choices) == mine.choices
        else:
            assert mine.choices is None
        if isinstance(theirs.type, click.IntRange):
            assert theirs.type.min == mine.min_int
        else:
            assert mine.min_int is None
        if isinstance(theirs, click.Option):
            assert theirs.help == mine.help and theirs.is_flag == (mine.kind == "flag")
            assert theirs.multiple == (mine.kind == "multiple")


@pytest.mark.parametrize("name", ARCHIVE_COMMANDS)
def test_defaults_agree_between_table_and_click(name: str) -> None:
    from_click = _click_values(name, _required(name))
    for p in table(name):
        if p.kind != "argument":
            assert from_click[p.dest] == p.default, p


def test_search_defaults_agree_between_click_and_the_warm_parser() -> None:
    args = _required("search")
    assert parse("search", args) == _click_values("search", args)


def _cases(name: str) -> list[tuple[str, list[str]]]:
    out = []
    for p in table(name):
        if p.kind == "argument":
            continue
        if p.kind == "flag":
            out.append((p.name, [p.name]))
        elif p.choices is not None:
            out.extend((p.name, [p.name, choice]) for choice in p.choices)
            if p.kind == "multiple" and len(p.choices) > 1:
                out.append((p.name, [p.name, p.choices[0], f"{p.name}={p.choices[-1]}"]))
        else:
            value = _SAMPLE_VALUE.get(p.name, "some-value")
            out.append((p.name, [p.name, value]))
            out.append((p.name, [f"{p.name}={value}"]))
            if p.kind == "multiple":
                out.append((p.name, [p.name, "a", p.name, "b"]))
    return out


@pytest.mark.parametrize(("option", "args"), _cases("search"))
def test_every_search_option_reads_the_same_both_ways(option: str, args: list[str]) -> None:
    full = _required("search") + args
    assert parse("search", full) == _click_values("search", full)


def test_what_the_warm_parser_leaves_to_click() -> None:
    name = "search"
    required = _required(name)
    assert parse(name, [*required, "--help"]) is None
    assert parse(name, [*required, "--no-such-option"]) is None
    for p in table(name):
        if p.kind == "argument":
            continue
        if p.choices is not None:
            assert parse(name, [*required, p.name, "not-a-choice"]) is None
        if p.min_int is not None:
            assert parse(name, [*required, p.name, str(p.min_int - 1)]) is None
            assert parse(name, [*required, p.name, "²"]) is None


def test_search_takes_no_click_callback_the_warm_parser_would_skip() -> None:
    from pitools.cli.options import table_params

    with pytest.raises(ValueError, match="warm search"):
        table_params("search", callbacks={"limit": lambda ctx, param, value: value})


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_of_every_command_is_in_its_help(run, name: str) -> None:
    text = " ".join(run(name, "--help").stdout.split())  # help wraps at 80 columns
    options = [p for p in _command(name).params if isinstance(p, click.Option)]
    assert options
    for option in options:
        for opt in [*option.opts, *option.secondary_opts]:
            assert opt in text, f"pitools {name} --help does not show {opt}"
        assert option.help, f"pitools {name} {option.opts[0]} has no help text"
        if option.show_default and not isinstance(option.default, (bool, type(None), tuple)):
            assert f"default: {option.default}" in text, f"pitools {name} --help hides {option.opts[0]}'s default"


def test_param_defaults_follow_their_kind() -> None:
    assert Param("--x", "x", "flag").default is False
    assert Param("--x", "x", "multiple").default == ()
    assert Param("--x", "x", default=3).default == 3
