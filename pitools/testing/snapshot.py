"""syrupy extensions that store Pi contexts as files a reviewer can read in a pull request.

``PiContextSnapshot`` writes a context (or a compaction plan, or any JSON document pitools gives)
as pretty-printed JSON, one key per line in the order pitools prints them, so a changed message
shows as a few changed lines instead of one changed 40 KB line. ``PiMarkdownSnapshot`` stores text,
for the Markdown form of a context (:meth:`pitools.testing.PiSession.context_markdown`)::

    def test_context(pi_session, snapshot):
        session = pi_session("tests/fixtures/run.jsonl")
        assert session.context() == snapshot(extension_class=PiContextSnapshot)
        assert session.context_markdown() == snapshot(extension_class=PiMarkdownSnapshot)

Each snapshot is its own file under ``__snapshots__/<test file>/<test name>.json`` (or ``.md``);
``pytest --snapshot-update`` writes them.
"""

from __future__ import annotations

import json
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

__all__ = ["PiContextSnapshot", "PiMarkdownSnapshot"]


class PiContextSnapshot(SingleFileSnapshotExtension):
    """A JSON document as a pretty-printed ``.json`` file (2-space indent, key order kept, text as
    written: non-ASCII stays readable)."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    def serialize(self, data: Any, **_: Any) -> str:
        # allow_nan=False: JSON has no NaN; pitools' documents never hold one, and a snapshot must
        # stay a file any JSON tool reads.
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


class PiMarkdownSnapshot(SingleFileSnapshotExtension):
    """Text (a context's Markdown form) as a ``.md`` file."""

    _write_mode = WriteMode.TEXT
    file_extension = "md"

    def serialize(self, data: Any, **_: Any) -> str:
        if not isinstance(data, str):
            raise TypeError(f"PiMarkdownSnapshot stores text, not {type(data).__name__}")
        return data
