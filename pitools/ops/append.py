"""Append new entries to a session: the one write behind ``compact --apply``, ``navigate
--summarize``/``--label`` (and ``heal``).

:func:`append_entries` takes what the caller read and decided (the stamp taken before reading,
the loaded session, the new entry dicts) and does the rest the same way for every command:

* **The last line.** Pi's loader terminates a last line that has no newline and then appends
  after it. So does pitools when that line is complete (JSON or blank: a CRLF file from an
  editor, a file written without a final newline): the ``\\n`` goes in the same guarded write as
  the new lines (or into the ``-o`` copy). A last line that is not complete JSON is a torn write,
  or Pi writing it right now: pitools refuses and says which line.
* **The write.** In place through :func:`pitools.store.append_lines` (backup first, the final
  check right before one write), or with ``output`` a new file: the stamped bytes copied (proven by
  their hash) under a new header, then the new lines (:func:`write_copy`).
* **The result.** The written session as Pi reads it, its header found the way the loader finds it
  (the first parsed value, whatever garbage precedes it), without parsing the file again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pitools import store
from pitools.core.compaction.plan import compaction_line
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.json.parse import parse_json_line
from pitools.core.session.load import LoadedSession
from pitools.errors import PitoolsError, SessionChangedError


@dataclass(slots=True)
class Appended:
    """What :func:`append_entries` wrote."""

    #: The file written: the session itself, or ``output``.
    written_to: str
    #: The backup of the session (in place, unless ``backup=False``).
    backup: str | None
    #: The written session as Pi loads it: the entries already loaded plus the new ones.
    session: LoadedSession
    #: True when the session's last line had no newline and pitools wrote it first.
    terminated: bool


def append_entries(
    path: str,
    stamp: store.FileStamp,
    loaded: LoadedSession,
    entries: Sequence[dict[str, Any]],
    *,
    output: str | None = None,
    backup: bool = True,
    new_session: bool = True,
    now: _dt.datetime | None = None,
) -> Appended:
    """Append ``entries`` (in order, one line each) to the session at ``path``, or write them
    after a copy of it to ``output``.

    ``stamp`` is :func:`pitools.store.stamp` taken *before* ``loaded`` was read from ``path``:
    anything another process appended since is refused (:class:`SessionChangedError`), nothing is
    written. ``new_session`` (with ``output``): the copy gets a new session id and timestamp and
    ``parentSession`` pointing at ``path``, as Pi's fork and clone make them; false keeps the
    source's header. ``backup`` (in place): keep ``<path>.bak-<time>``.
    """
    if not entries:
        raise ValueError("append_entries: nothing to append")
    lines = [compaction_line(e) for e in entries]
    terminate = not stamp.ends_with_newline
    if terminate:
        check_last_line(path, stamp)
    header = loaded.session.header
    made: Any = None
    if output:
        header = write_copy(path, stamp, loaded, lines, output, new_session=new_session, now=now)
        written_to = output
    else:
        made = store.append_lines(path, lines, expected=stamp, backup=backup, terminate=terminate)
        written_to = path
    session = _as_written(loaded, entries, written_to, header)
    return Appended(written_to, None if made is None else str(made), session, terminate)


class WrittenThenFailed(PitoolsError):
    """A step after a successful write failed: the message says what was written where."""


@contextlib.contextmanager
def reporting_the_write(done: Appended, what: str) -> Iterator[None]:
    """Run the steps after a write (replaying the written session, the result) so that a failure
    in them still says the write happened: the user must not think the run wrote nothing."""
    written = f"{what} was written to {done.written_to}" + (f" (backup: {done.backup})" if done.backup else "")
    try:
        yield
    except PitoolsError as exc:
        raise WrittenThenFailed(f"{written}, but then: {exc.message}", path=exc.path, line=exc.line) from exc
    except Exception as exc:
        failed = WrittenThenFailed(
            f"{written}, but then an internal error ({type(exc).__name__}: {exc}); this is a bug — rerun with "
            "--debug for the traceback"
        )
        failed.exit_code = 3
        raise failed from exc


def check_last_line(path: str, stamp: store.FileStamp) -> None:
    """Refuse a last line without newline unless it is complete: JSON (Pi parses it and
    terminates it before appending) or blank. A torn fragment is refused, naming it."""
    last = _last_line(path, stamp)
    if not last.strip(b" \t\r\n\f\v"):
        return
    try:
        parse_json_line(last)
    except ValueError:
        pass
    else:
        return
    raise PitoolsError(
        f"the file's last line ({len(last):,} bytes, no newline) is not complete JSON: a torn write, or Pi is "
        "writing it right now; refusing to add a line after it. If Pi is not running, "
        "`pitools repair --in-place` removes it",
        path=path,
    )


def _last_line(path: str, stamp: store.FileStamp) -> bytes:
    """The bytes after the last newline of the stamped file (read backwards in blocks)."""
    if b"\n" in stamp.tail or len(stamp.tail) == stamp.size:
        return stamp.tail.rsplit(b"\n", 1)[-1]
    block = 1 << 20
    parts: list[bytes] = []
    with open(path, "rb") as fh:
        end = stamp.size
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            data = fh.read(end - start)
            cut = data.rfind(b"\n")
            if cut >= 0:
                parts.append(data[cut + 1 :])
                break
            parts.append(data)
            end = start
    return b"".join(reversed(parts))


def _new_file_header(header: dict[str, Any], source: str, now: _dt.datetime | None) -> dict[str, Any]:
    """The source's header for a new file: a new session id and timestamp, ``parentSession``
    pointing at the source (absolute path), every other field kept."""
    from pitools.core.js.date import iso_now
    from pitools.core.session.ids import uuid7

    new = dict(header)
    new["id"] = uuid7(now)
    new["timestamp"] = iso_now(now)
    new["parentSession"] = os.path.abspath(source)
    return new


def write_copy(
    path: str,
    before: store.FileStamp,
    loaded: LoadedSession,
    lines: list[bytes],
    output: str,
    *,
    new_session: bool = True,
    now: _dt.datetime | None = None,
) -> dict[str, Any] | None:
    """Write ``output``: the source with a new header (new id, ``parentSession`` -> source, as
    Pi's fork and clone make them), every other line unchanged, then ``lines``; returns the
    header written.

    Exactly the bytes that were stamped (``before``) are copied, proven by their hash (the
    replaced header included), so a line appended while copying can neither slip in nor be cut
    in half. The header replaced is the one the loader found (lines before it, which Pi skips,
    are copied as they are). A last line without newline gets one before ``lines`` (the caller
    has checked it is complete). ``new_session=False`` keeps the source's header.
    """
    store.check_unchanged(path, before)
    raw = loaded.session.raw
    header_at, header_len = raw.offsets[0], raw.lengths[0]
    new_header = _new_file_header(loaded.session.header or {}, path, now) if new_session else None

    def chunks() -> Iterator[bytes]:
        import hashlib

        digest, left = hashlib.sha256(), before.size
        with open(path, "rb") as fh:

            def read(n: int) -> bytes:
                nonlocal left
                data = fh.read(min(n, left))
                digest.update(data)
                left -= len(data)
                return data

            if new_header is not None:
                yield read(header_at)
                read(header_len)  # hashed, replaced by the new header
                yield to_json_bytes(new_header)
            while left > 0 and (chunk := read(1 << 20)):
                yield chunk
        if left or digest.hexdigest() != before.sha256:
            raise SessionChangedError("the file changed while pitools copied it; nothing was written", path=path)
        if not before.ends_with_newline:
            yield b"\n"
        yield from lines

    store.write_new(output, chunks())
    return new_header if new_header is not None else loaded.session.header


def _as_written(
    loaded: LoadedSession, new_entries: Sequence[dict[str, Any]], written_to: str, header: dict[str, Any] | None
) -> LoadedSession:
    """The written session as Pi reads it: the entries already loaded plus the appended lines.

    The written file is exactly the bytes that were loaded (proven by their hash while copying or
    by the stamp before appending; ``-o`` replaces only the header, which the caller passes)
    followed by the new lines, so reading it again would only cost a second parsed copy (2.3 GB
    for a 1 GB session). The header is the loader's (the first parsed value), never simply the
    file's first line, which may be garbage Pi skips.
    """
    from pitools.core.session.tree import SessionIndex

    values = [parse_json_line(compaction_line(e))[0] for e in new_entries]  # the lines as Pi parses them
    entries = [*loaded.session.entries, *values]
    session = dataclasses.replace(loaded.session, path=written_to, header=header, entries=entries)
    return LoadedSession(session, SessionIndex.build(entries))
