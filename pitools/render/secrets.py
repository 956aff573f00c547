"""Render secret findings: human lines, the JSON document, GitHub annotations, SARIF 2.1.0.

Findings carry no secret (only a masked preview); field paths and file names are session or
user data, so every text line goes through :func:`pitools.render.safe.safe_text` (one line,
controls escaped) and human output is printed as ``rich.text.Text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pitools import __version__
from pitools.core.js.types import JsonObject
from pitools.core.secrets.patterns import ENTROPY_KIND, PATTERNS
from pitools.core.secrets.scan import Finding

if TYPE_CHECKING:
    from rich.console import Console

    from pitools.core.secrets.redact import RedactStats

#: Kinds that are not patterns, with their descriptions (for SARIF rules).
EXTRA_KINDS = {
    ENTROPY_KIND: "high-entropy string (random-looking token of 32-200 characters)",
    "given-value": "a value given with --value or --values-file",
    "env-value": "the value of a credential-named environment variable (--env)",
    "pi-api-key": "an API key Pi itself would use (auth.json, models.json, environment)",
}


def safe(text: str) -> str:
    """One line with controls, bidi overrides and lone surrogates escaped (file names, field paths)."""
    from pitools.render.safe import safe_text

    return safe_text(text, one_line=True)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def finding_line(f: Finding) -> str:
    entry = f" (entry {f.entry_id})" if f.entry_id else ""
    return safe(f"{f.file}:{f.line}: {f.preview} in {f.field}{entry}")


def summary(findings: Sequence[Finding], files: int, accepted: int = 0) -> str:
    base = f"{_plural(files, 'file')} scanned"
    extra = f" ({accepted} accepted by the baseline)" if accepted else ""
    if not findings:
        return f"{base}: no secrets found{extra}"
    kinds = len({f.kind for f in findings})
    return f"{base}: {_plural(len(findings), 'secret')} of {_plural(kinds, 'kind')} found{extra}"


def render_human(console: Console, findings: Sequence[Finding], files: int, accepted: int = 0) -> None:
    from rich.text import Text

    for f in findings:
        console.print(Text(finding_line(f)), soft_wrap=True)
    style = "bold red" if findings else "bold green"
    console.print(Text(summary(findings, files, accepted), style=style), soft_wrap=True)


def scan_json(findings: Sequence[Finding], files: int, accepted: int = 0) -> JsonObject:
    """The ``pitools scan --format json`` document (schemas/output/scan.schema.json)."""
    return {
        "findings": [f.to_json() for f in findings],
        "files": files,
        "accepted": accepted,
    }


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(findings: Sequence[Finding]) -> list[str]:
    """``::error file=…,line=…,title=secret KIND::preview in field`` per finding."""
    return [
        f"::error file={_escape_property(safe(f.file))},line={f.line},title={_escape_property('secret ' + f.kind)}::"
        + _escape_data(safe(f"{f.preview} in {f.field}"))
        for f in findings
    ]


def _rules() -> list[dict[str, Any]]:
    described = {p.kind: p.description for p in PATTERNS} | EXTRA_KINDS
    described.setdefault("base64", "secret inside a base64 block")
    return [
        {"id": kind, "name": kind, "shortDescription": {"text": text}, "defaultConfiguration": {"level": "error"}}
        for kind, text in described.items()
    ]


def sarif(findings: Sequence[Finding]) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; rules are the kinds, results the findings."""
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.kind,
            "level": "error",
            "message": {"text": safe(f"{f.preview} in {f.field}" + (f" (entry {f.entry_id})" if f.entry_id else ""))},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.file)},
                        "region": {"startLine": f.line},
                    },
                    "logicalLocations": [{"fullyQualifiedName": safe(f.field), "kind": "member"}],
                }
            ],
            "partialFingerprints": {"pitoolsSecret/v1": f.fingerprint},
        }
        if f.kind in index:
            result["ruleIndex"] = index[f.kind]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pitools-scan",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }


def _uri(path: str) -> str:
    """A relative reference for a relative path (what code scanning expects), file:// otherwise."""
    import os
    from pathlib import Path
    from urllib.parse import quote

    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(path.replace("\\", "/"), safe="/._-~")


def redact_summary(stats: RedactStats, output: str | None) -> str:
    kinds = len({f.kind for f in stats.findings})
    parts = [f"redacted {_plural(len(stats.findings), 'secret')} of {_plural(kinds, 'kind')}"]
    if stats.images_removed:
        parts.append(f"removed {_plural(stats.images_removed, 'image')}")
    if stats.thinking_removed:
        parts.append(f"removed {_plural(stats.thinking_removed, 'thinking block')}")
    if stats.paths_replaced:
        parts.append(f"replaced {_plural(stats.paths_replaced, 'home/user path')}")
    changed = _plural(stats.changed_lines, "line")
    if output is None:
        return safe(f"would have {', '.join(parts)}; {changed} of {stats.lines} to rewrite; nothing written (dry run)")
    return safe(f"{', '.join(parts)}; {changed} of {stats.lines} rewritten; wrote {output}")


def export_redact_note(stats: RedactStats) -> str:
    kinds = len({f.kind for f in stats.findings})
    return f"redacted {_plural(len(stats.findings), 'secret')} of {_plural(kinds, 'kind')} before exporting"
