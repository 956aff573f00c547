"""Issue 40: compact --apply and navigate --summarize on a session whose first line is garbage (with
a second header and a parent cycle) or whose last line has no newline, in place and with -o;
Pi 1.6.0 loads every written file with the new entry at its leaf (recorded by the oracle,
``tests/golden/append_cases.py``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.access import entry_id
from pitools.core.js.json.encode import jsonable
from pitools.core.parity import diff_values
from pitools.core.session.load import load
from tests.golden import append_cases
from tests.golden.append_cases import CASES, Case

RECORDS = {r["case"]["name"]: r for r in append_cases.load_recording()}


def test_recording_covers_every_case() -> None:
    assert sorted(RECORDS) == sorted(c.name for c in CASES)
    assert {(c.source, c.command, c.in_place) for c in CASES} == {
        (s, cmd, ip)
        for s in (append_cases.GARBAGE, append_cases.CRLF)
        for cmd in ("compact", "navigate")
        for ip in (True, False)
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pi_loads_the_written_file_with_the_new_entry_at_its_leaf(case: Case, tmp_path: Path) -> None:
    rec = RECORDS[case.name]
    out = tmp_path / "session.jsonl"
    appended = append_cases.build(case, out)
    written = out.read_bytes()
    # The very bytes Pi was run on.
    assert hashlib.sha256(written).hexdigest() == rec["sha256"]
    assert [e["id"] for e in appended] == rec["appended"]
    pi: dict[str, Any] = rec["pi"]
    assert pi["invalid"] is False and pi["leafId"] == appended[-1]["id"]
    assert pi["loaderAppendedNewline"] is False  # pitools terminated the last line itself

    source = (append_cases.GOLDEN / case.source / "session.jsonl").read_bytes()
    if case.in_place:
        # Every source byte kept; a missing final newline added once, before the new lines.
        assert written.startswith(source)
        rest = written[len(source) :]
        assert rest.startswith(b"\n") == (not source.endswith(b"\n"))
    else:
        # A new session; the garbage line Pi skips stays first, the header after it is replaced.
        assert pi["sessionId"] == append_cases.NEW_SESSION_ID
        if case.source == append_cases.GARBAGE:
            assert written.splitlines()[0] == source.splitlines()[0] == b"this line is not json"

    # pitools reads the written file as Pi does: the same entries, leaf, path and context.
    loaded = load(str(out))
    assert loaded.session.header is not None and loaded.session.header["id"] == pi["sessionId"]
    assert [entry_id(e) for e in loaded.session.entries] == pi["entryIds"]
    assert loaded.leaf(None) == pi["leafId"]
    index = loaded.index
    assert [entry_id(e) for e in index.get_branch(pi["leafId"])] == pi["path"]
    from pitools.core.context.build import build_projection, context_entries_from_path

    session_path = index.session_path(pi["leafId"])
    assert [entry_id(e) for e in context_entries_from_path(session_path)] == pi["contextEntries"]
    assert not diff_values(jsonable(build_projection(session_path).messages), pi["messages"])
