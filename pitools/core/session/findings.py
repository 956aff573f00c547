"""The one record of a problem found in a session file, and its severities.

The loader reports what it meets while reading (:class:`Diagnostic`, which also knows the byte
offset of its line); ``validate`` reports every check's result (:class:`Finding`). Both are the
same record, so a loader diagnostic becomes a finding without copying it field by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pitools.core.js.json.record import record_json

__all__ = ["ERROR", "INFO", "WARNING", "Diagnostic", "Finding"]

ERROR = "error"
WARNING = "warning"
INFO = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a stable kebab-case code (``validate --explain`` lists them), its severity,
    a message and where it is."""

    code: str
    severity: str
    message: str
    line: int | None = None
    entry_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return record_json(self)


@dataclass(frozen=True, slots=True)
class Diagnostic(Finding):
    """A finding made while reading the file, with the byte offset of its line."""

    offset: int | None = None
