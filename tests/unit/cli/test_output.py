"""The output layer on its own: colour and width decisions, safe text, JSON, trailing spaces."""

from __future__ import annotations

import io

import pytest

from pitools.cli.output import Output, StripTrailing, parse_width, wants_color
from pitools.render.safe import UNLIMITED_WIDTH, safe_text, unlimited


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("mode", "tty", "env", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # empty means unset (no-color.org)
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("auto", False, {"FORCE_COLOR": "0"}, False),
        ("auto", True, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ("auto", True, {"TERM": "dumb"}, False),
        ("auto", False, {"TERM": "dumb", "FORCE_COLOR": "1"}, True),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_rules(mode: str, tty: bool, env: dict[str, str], expected: bool) -> None:
    assert wants_color(mode, tty, env) is expected


def test_width_in_a_pipe_is_unlimited_and_on_a_terminal_is_the_terminals() -> None:
    piped = Output.from_environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), env={})
    assert piped.width is None and unlimited(piped.console())
    tty = Output.from_environment(stdout=FakeTTY(), stderr=FakeTTY(), stdin=io.StringIO(), env={"COLUMNS": "77"})
    assert tty.width == 77 and tty.console().width == 77 and tty.progress
    fixed = Output.from_environment(
        "auto", 40, stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), env={"PITOOLS_WIDTH": "90"}
    )
    assert fixed.width == 40
    env_fixed = Output.from_environment(
        stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), env={"PITOOLS_WIDTH": "90"}
    )
    assert env_fixed.width == 90
    dumb = Output.from_environment(stdout=FakeTTY(), stderr=FakeTTY(), stdin=io.StringIO(), env={"TERM": "dumb"})
    assert not dumb.color and not dumb.progress


def test_parse_width() -> None:
    assert (
        parse_width("12") == 12 and parse_width("0") is None and parse_width("x") is None and parse_width(None) is None
    )


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain ✓ 认证 café", "plain ✓ 认证 café"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),
        ("a\u202eb\u2066c\u2069", "a\\u202eb\\u2066c\\u2069"),
        ("\x9b31m", "\\x9b31m"),
        ("lone \ud800", "lone \\ud800"),
        ("tab\tand\nnewline\r", "tab\tand\nnewline\\x0d"),
        ("del\x7f", "del\\x7f"),
    ],
)
def test_safe_text(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown
    assert safe_text(shown) == shown  # already safe: unchanged


def test_safe_text_one_line() -> None:
    assert safe_text("a\nb\tc\rd\x1b", one_line=True) == "a b c d\\x1b"


def test_console_escapes_every_segment_and_strips_padding() -> None:
    from rich.table import Table
    from rich.text import Text

    stdout = io.StringIO()
    out = Output(stdout=stdout, stderr=io.StringIO(), width=None)
    table = Table.grid(padding=(0, 2))
    table.add_column()
    table.add_column()
    table.add_row("k", Text("\x1b[2Jwiped"))
    table.add_row("longer key", "v")
    out.console().print(table)
    out.console().print("bidi \u202e here")
    text = stdout.getvalue()
    assert "\x1b" not in text and "\\x1b[2Jwiped" in text and "\\u202e" in text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_colour_console_keeps_its_own_codes_only() -> None:
    from rich.text import Text

    stdout = io.StringIO()
    out = Output(stdout=stdout, stderr=io.StringIO(), color=True, width=80)
    out.console().print(Text("\x1b]8;;http://x\x07link", style="bold"))
    text = stdout.getvalue()
    # rich drops BEL itself; the ESC is shown escaped inside our bold
    assert text.startswith("\x1b[1m") and "\\x1b]8;;http://xlink" in text and text.count("\x1b") == 2


def test_echo_message_and_json() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    out = Output(stdout=stdout, stderr=stderr)
    out.echo("x\x1by")
    out.message("bad\nid \u202e")
    out.write_json({"a": "\x1b", "b": [1.0, None]})
    assert stdout.getvalue() == 'x\\x1by\n{"a":"\\u001b","b":[1,null]}\n'
    assert stderr.getvalue() == "pitools: bad id \\u202e\n"


def test_strip_trailing_keeps_closing_colour_codes() -> None:
    buf = io.StringIO()
    StripTrailing(buf).write("a   \x1b[0m\nb  \nc")
    assert buf.getvalue() == "a\x1b[0m\nb\nc"


@pytest.mark.parametrize(
    "text",
    ["a  \nb", "a\nb ", "│  │  x\n", "a \x1b[2m\nb", "no padding\n│  │  └─ x", "", " ", "x \x1b[0m"],
)
def test_strip_trailing_quick_check_changes_nothing(text: str) -> None:
    # The substring pre-check must strip exactly what the regex alone strips.
    from pitools.cli.output import _TRAILING

    buf = io.StringIO()
    StripTrailing(buf).write(text)
    assert buf.getvalue() == _TRAILING.sub(r"\1", text)


def test_unlimited_width_constant() -> None:
    assert UNLIMITED_WIDTH >= 100_000
