"""``validate``'s human output: the plain-text fast path prints exactly what rich would."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.cli.output import Output
from pitools.core.validate import CODES, Finding, ValidationReport, validate_file
from pitools.render.safe import safe_text
from pitools.render.validate import human_lines, render_human
from tests import support

GOLDEN = support.GOLDEN


def _rich_output(reports: list[ValidationReport], fail_on: str = "error") -> str:
    """What ``render_human`` prints through the output layer's console for a pipe (no colour)."""
    buffer = io.StringIO()
    out = Output(stdout=buffer, stderr=io.StringIO())
    render_human(out.console(), reports, fail_on)
    return buffer.getvalue()


def _plain_output(reports: list[ValidationReport], fail_on: str = "error") -> str:
    """The fast path of ``pitools validate`` without colour."""
    return "\n".join(safe_text(line, one_line=True).rstrip(" ") for line in human_lines(reports, fail_on)) + "\n"


def test_golden_reports_print_the_same_plain_and_through_rich() -> None:
    reports = [validate_file(p) for p in sorted(GOLDEN.glob("*/session.jsonl"))]
    assert sum(len(r.findings) for r in reports) > 100
    assert _plain_output(reports) == _rich_output(reports)
    assert _plain_output(reports, "warning") == _rich_output(reports, "warning")


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(st.text(max_size=40), min_size=0, max_size=4),
    path=st.text(min_size=1, max_size=20),
    line=st.none() | st.integers(1, 10**6),
)
def test_any_text_prints_the_same(messages: list[str], path: str, line: int | None) -> None:
    findings = tuple(Finding("duplicate-id", CODES["duplicate-id"].severity, m, line, None) for m in messages)
    reports = [ValidationReport(path, findings)]
    assert _plain_output(reports) == _rich_output(reports)


def test_control_characters_are_shown_escaped_on_one_line() -> None:
    for text, shown in (
        ("bell\x07", "bell\\x07"),
        ("carriage\rreturn", "carriage return"),
        ("esc\x1b[31m", "esc\\x1b[31m"),
    ):
        report = ValidationReport("s.jsonl", (Finding("duplicate-id", "error", f"id {text}", 3, None),))
        assert f"id {shown}\n" in _rich_output([report])
        assert _plain_output([report]) == _rich_output([report])
