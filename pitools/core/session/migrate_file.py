"""Produce the bytes of a migrated session file without writing anything.

Unchanged lines are copied byte for byte; changed values are serialized as Pi's
``JSON.stringify`` would. Unlike Pi, which drops blank and malformed lines when it rewrites a
migrated file, pitools keeps them where they were (Pi skips them on load anyway), and it
always ends the file with a newline.
"""

from __future__ import annotations

from collections.abc import Iterator

from pitools.core.js.json.encode import js_stringify
from pitools.core.session.lines import _iter_lines
from pitools.core.session.loaded import Session


def migrated_lines(session: Session) -> Iterator[bytes]:
    """Yield the migrated file as chunks of bytes (one per line)."""
    values = session.migrated_values
    report = session.migration
    changed_by_line: dict[int, int] = {}
    if values is not None:
        for changed in report.changed:
            changed_by_line[session.raw.lines[changed]] = changed
    for lineno, (_offset, data, _had_nl) in enumerate(_iter_lines(session.path), start=1):
        pos = changed_by_line.get(lineno)
        if pos is not None and values is not None:
            text = js_stringify(values[pos]) or "null"
            yield text.encode("utf-8", "surrogatepass") + b"\n"
        else:
            yield data + b"\n"
