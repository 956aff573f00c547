"""Render :class:`~pitools.core.validate.ValidationReport` lists as text, JSON or GitHub annotations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.js.types import JsonObject
from pitools.core.validate import Finding, ValidationReport
from pitools.render.safe import safe_text

if TYPE_CHECKING:
    from rich.console import Console

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
#: GitHub Actions workflow commands per severity.
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


#: ``--for-model`` request checks (``ops.request.check_requests``): one dict a file.
RequestChecks = Sequence[dict[str, Any]]
_RANK = {"info": 0, "warning": 1, "error": 2}


def request_severities(check: dict[str, Any]) -> list[str]:
    """The severity of each request finding of one file; a request that cannot be built is an error."""
    if "error" in check:
        return ["error"]
    return [f["severity"] for f in check["findings"]]


def total_counts(reports: Sequence[ValidationReport], checks: RequestChecks | None = None) -> dict[str, int]:
    """Findings per severity over every file, request findings (``--for-model``) included."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for report in reports:
        for severity, n in report.counts.items():
            counts[severity] += n
    for check in checks or ():
        for severity in request_severities(check):
            counts[severity] += 1
    return counts


def any_failed(reports: Sequence[ValidationReport], fail_on: str, checks: RequestChecks | None = None) -> bool:
    """Whether a finding (a request finding too) reaches ``fail_on``: the exit status 1."""
    return any(report.failed(fail_on) for report in reports) or any(
        _RANK[s] >= _RANK[fail_on] for check in checks or () for s in request_severities(check)
    )


def validate_json(reports: Sequence[ValidationReport], fail_on: str, checks: RequestChecks | None = None) -> JsonObject:
    """The ``pitools validate --format json`` document (schemas/output/validate.schema.json)."""
    document: dict[str, Any] = {
        "pi": PI_REFERENCE_VERSION,
        "status": "fail" if any_failed(reports, fail_on, checks) else "ok",
        "files": [report.to_json() for report in reports],
        "counts": total_counts(reports, checks),
    }
    if checks is not None:
        document["requestChecks"] = list(checks)
    return document


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_text(reports: Sequence[ValidationReport], fail_on: str, checks: RequestChecks | None = None) -> str:
    """One closing line: files checked, findings per severity (request findings included), and the verdict."""
    counts = total_counts(reports, checks)
    files = _plural(len(reports), "file")
    if not any(counts.values()):
        return f"{files} checked: no problems found"
    found = ", ".join(
        [_plural(counts["error"], "error"), _plural(counts["warning"], "warning"), f"{counts['info']} info"]
    )
    verdict = "failed" if any_failed(reports, fail_on, checks) else "passed"
    flagged_paths = {r.path for r in reports if r.findings}
    flagged_paths.update(c["path"] for c in checks or () if request_severities(c))
    return f"{files} checked, {len(flagged_paths)} with findings: {found} — {verdict}"


def finding_location(path: str, finding: Finding) -> str:
    return f"{path}:{finding.line}" if finding.line is not None else path


def grouped(report: ValidationReport) -> list[tuple[Finding, int, int | None]]:
    """Identical findings (same code, severity and message) once each, in order of first
    appearance: ``(first finding, count, last line)``. JSON keeps every instance."""
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for finding in report.findings:
        key = (finding.code, finding.severity, finding.message)
        group = groups.get(key)
        if group is None:
            groups[key] = [finding, 1, finding.line]
        else:
            group[1] += 1
            if finding.line is not None:
                group[2] = finding.line
    return [(g[0], g[1], g[2]) for g in groups.values()]


def _rows(reports: Sequence[ValidationReport]) -> list[tuple[str, str, str, str]]:
    """``(location, severity, code, message)`` per group of identical findings."""
    rows = []
    for report in reports:
        for finding, count, last in grouped(report):
            message = finding.message
            if count > 1:
                span = f", lines {finding.line:,}–{last:,}" if finding.line is not None and last is not None else ""
                message = f"{message} ({count:,}×{span})"
            rows.append((finding_location(report.path, finding), finding.severity, finding.code, message))
    return rows


def repair_hint(reports: Sequence[ValidationReport]) -> str | None:
    """A closing hint when ``pitools repair`` can fix some findings (codes in REPAIRABLE_CODES)."""
    from pitools.core.repair import REPAIRABLE_CODES

    codes = sorted({f.code for r in reports for f in r.findings if f.code in REPAIRABLE_CODES and f.severity != "info"})
    if not codes:
        return None
    return f"hint: `pitools repair FILE --dry-run` shows how it would fix: {', '.join(codes)}"


def human_lines(reports: Sequence[ValidationReport], fail_on: str, checks: RequestChecks | None = None) -> list[str]:
    """The lines :func:`render_human` prints, without colour (identical findings grouped)."""
    lines = [f"{where}: {severity} {code} {message}" for where, severity, code, message in _rows(reports)]
    if checks is not None:
        lines.extend(request_check_lines(checks, "human"))
    lines.append(summary_text(reports, fail_on, checks))
    return lines


def render_human(
    console: Console, reports: Sequence[ValidationReport], fail_on: str, checks: RequestChecks | None = None
) -> None:
    """``path:line: severity code message`` per group of identical findings, then the summary.

    Messages quote session data (ids, timestamps, field values), so everything is printed as
    ``rich.text.Text``, never parsed as markup, made safe (one line, controls escaped) and never
    wrapped: one finding is one line, the same line the plain-text path prints.
    """
    from rich.text import Text

    for where, severity, code, message in _rows(reports):
        line = Text()
        line.append(safe_text(where, one_line=True) + ":", style="bold")
        line.append(" ")
        line.append(severity, style=_SEVERITY_STYLE.get(severity, ""))
        line.append(" ")
        line.append(code, style="magenta")
        line.append(" ")
        line.append(safe_text(message, one_line=True))
        console.print(line, soft_wrap=True)
    for text in request_check_lines(checks, "human") if checks is not None else ():
        console.print(Text(text), soft_wrap=True)
    failed = any_failed(reports, fail_on, checks)
    style = "bold red" if failed else "bold green"
    console.print(Text(summary_text(reports, fail_on, checks), style=style), soft_wrap=True)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(reports: Sequence[ValidationReport]) -> list[str]:
    """GitHub Actions annotations: ``::error file=…,line=…,title=CODE::message`` per finding."""
    out: list[str] = []
    for report in reports:
        for finding in report.findings:
            props = [f"file={_escape_property(report.path)}"]
            if finding.line is not None:
                props.append(f"line={finding.line}")
            props.append(f"title={_escape_property(finding.code)}")
            command = _GITHUB_COMMAND.get(finding.severity, "notice")
            out.append(f"::{command} {','.join(props)}::{_escape_data(finding.message)}")
    return out


def code_list_lines() -> list[str]:
    """``validate --list-codes``: one aligned row a code (code, severity, summary), then the grading."""
    from pitools.core.validate.codes import CODES, GRADING

    width = max(len(c) for c in CODES)
    lines = [f"{c:<{width}}  {CODES[c].severity:<7}  {CODES[c].summary}" for c in CODES]
    lines.append("")
    lines.extend(f"{severity}: {meaning}" for severity, meaning in GRADING.items())
    lines.append("`pitools validate --explain CODE` tells what Pi does and how to fix it.")
    return lines


def explain_lines(e: dict[str, Any]) -> list[str]:
    """``validate --explain CODE``: what the code means, what Pi does, why that severity, how to fix it."""
    return [
        f"{e['code']} ({e['severity']})",
        f"  what it means:  {e['meaning']}",
        f"  what Pi does:   {e['piBehaviour']}",
        f"  why {e['severity']}:{' ' * (11 - len(e['severity']))}{e['grading']}",
        f"  how to fix it:  {e['fix']}",
    ]


def heal_hints(checks: RequestChecks) -> list[str]:
    """``validate --for-model``: for each file whose request breaks a rule, the ``pitools heal``
    command that fixes it (the text is :func:`pitools.render.request.heal_command`'s)."""
    from pitools.render.request import heal_command

    return [
        safe_text(f"hint: {heal_command(c['path'], c['model'])}", one_line=True)
        for c in checks
        if "error" not in c and c["findings"]
    ]


def request_check_lines(checks: RequestChecks, format_: str) -> list[str]:
    """``validate --for-model`` in human or GitHub form: one line a request finding, or one a file
    whose request breaks no rule (or cannot be built)."""
    lines = []
    for check in checks:
        path = check["path"]
        if "error" in check:
            lines.append(safe_text(f"{path}: request for the model cannot be built: {check['error']}", one_line=True))
            continue
        for f in check["findings"]:
            if format_ == "github":
                level = "error" if f["severity"] == "error" else "warning"
                # Escaped as github_lines escapes: a ':' or ',' in the path would end the property.
                props = f"file={_escape_property(path)},title={_escape_property(f['code'])}"
                message = _escape_data(f"{f['path'] or ''} {f['message']}")
                lines.append(safe_text(f"::{level} {props}::{message}", one_line=True))
            else:
                lines.append(
                    safe_text(
                        f"{path}: {f['severity']} {f['code']} (request to {check['model']}) at {f['path']}: "
                        f"{f['message']}",
                        one_line=True,
                    )
                )
        if not check["findings"]:
            lines.append(safe_text(f"{path}: the request to {check['model']} breaks no provider rule", one_line=True))
    return lines
