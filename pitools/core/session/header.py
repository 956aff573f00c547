"""A session's header, by Pi's two rules for finding it.

* The loader's (``SessionManager.setSessionFile``): the first line that parses to a truthy JSON
  value must be a ``session`` header with a string ``id`` (:func:`accepted_header`), or Pi
  rejects the whole file; a later ``session`` line is ignored (:func:`extra_header`, the
  diagnostic every keep policy reports).
* Discovery's (``readSessionHeader``, for ``--continue`` and session lists): the same test on the
  first truthy line within the first MiB (:func:`read_session_header`), without reading the rest.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from pitools.core.session.findings import WARNING, Diagnostic

#: ``MAX_SESSION_HEADER_SCAN_BYTES`` in session-manager.js.
HEADER_SCAN_LIMIT = 1024 * 1024


def accepted_header(value: Any) -> bool:
    """Whether Pi accepts a file whose first parsed value is ``value``: a header with a string id."""
    return type(value) is dict and value.get("type") == "session" and type(value.get("id")) is str


def extra_header(value: dict[str, Any], line: int, offset: int) -> Diagnostic:
    """The diagnostic for a ``session`` line after the first: Pi ignores it (every keep policy)."""
    eid = value.get("id")
    return Diagnostic(
        "extra-header",
        WARNING,
        "a second session header; Pi ignores it",
        line,
        offset=offset,
        entry_id=eid if isinstance(eid, str) else None,
    )


def read_session_header(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Pi's ``readSessionHeaderForDiscovery``: the header, or None when the file is not a session."""
    from pitools.core.js.json.parse import parse_json_line

    try:
        # Non-blocking, so opening a FIFO cannot wait for a writer; anything but a regular file is
        # skipped (Pi would block on a FIFO in the sessions folder; pitools does not follow it there).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = fh.read(HEADER_SCAN_LIMIT + 1)
    except OSError:
        return None
    over_limit = len(data) > HEADER_SCAN_LIMIT
    scanned = data[:HEADER_SCAN_LIMIT]
    start = 0
    while True:
        nl = scanned.find(b"\n", start)
        if nl == -1:
            break
        verdict = _header_candidate(scanned[start:nl], parse_json_line)
        if verdict is not _KEEP_SCANNING:
            header: dict[str, Any] | None = verdict
            return header
        start = nl + 1
    if over_limit:
        return None  # SessionHeaderScanLimitError: not a session for discovery
    verdict = _header_candidate(scanned[start:], parse_json_line)
    return None if verdict is _KEEP_SCANNING else verdict


_KEEP_SCANNING = object()


def _header_candidate(line: bytes, parse: Any) -> Any:
    """Pi's ``parseSessionHeaderCandidate``: keep scanning, not a session (None), or the header."""
    try:
        value, _ = parse(line)
    except ValueError:
        return _KEEP_SCANNING  # blank or malformed
    if value is None or value is False or value == "" or (type(value) in (int, float) and value == 0):
        return _KEEP_SCANNING  # parses to a falsy value
    return value if accepted_header(value) else None
