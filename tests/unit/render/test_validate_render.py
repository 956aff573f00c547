"""``validate``'s human output: the plain-text fast path prints exactly what rich would."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.validate import CODES, Finding, ValidationReport, validate_file
from pitools.render.validate import human_lines, plain_safe, render_human
from tests import support

GOLDEN = support.GOLDEN


def _rich_output(reports: list[ValidationReport], fail_on: str = "error") -> str:
    """What ``render_human`` prints through the console ``consoles()`` builds for a pipe."""
    from pitools.cli.options import consoles

    buffer = io.StringIO()
    out, _ = consoles("auto")
    out.file = buffer  # a StringIO is no terminal: no colour, no wrapping
    render_human(out, reports, fail_on)
    return buffer.getvalue()


def _plain_output(reports: list[ValidationReport], fail_on: str = "error") -> str:
    return "\n".join(human_lines(reports, fail_on)) + "\n"


def test_golden_reports_print_the_same_plain_and_through_rich() -> None:
    reports = [validate_file(p) for p in sorted(GOLDEN.glob("*/session.jsonl"))]
    assert sum(len(r.findings) for r in reports) > 100
    lines = human_lines(reports, "error")
    assert plain_safe(lines)
    assert _plain_output(reports) == _rich_output(reports)
    assert _plain_output(reports, "warning") == _rich_output(reports, "warning")


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(st.text(max_size=40), min_size=0, max_size=4),
    path=st.text(min_size=1, max_size=20),
    line=st.none() | st.integers(1, 10**6),
)
def test_any_safe_text_prints_the_same(messages: list[str], path: str, line: int | None) -> None:
    findings = tuple(Finding("duplicate-id", CODES["duplicate-id"].severity, m, line, None) for m in messages)
    reports = [ValidationReport(path, findings)]
    if plain_safe(human_lines(reports, "error")):
        assert _plain_output(reports) == _rich_output(reports)


def test_control_characters_go_through_rich() -> None:
    for text in ("tab\there", "bell\x07", "carriage\rreturn", "new\nline", "esc\x1b[31m"):
        report = ValidationReport("s.jsonl", (Finding("duplicate-id", "error", f"id {text}", 3, None),))
        assert not plain_safe(human_lines([report], "error"))
