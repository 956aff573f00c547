"""The session viewer page for one session (``export --format html`` and ``pitools serve``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pitools.core.session.load import Loaded

if TYPE_CHECKING:
    from pitools.core.views.viewer import EntryFacts
    from pitools.ops.parallel import Background


def settings_resolver(loaded: Loaded, *, use_config: bool = True) -> Any:
    """``(provider, modelId) | None`` → (compaction settings, context window), resolved as
    ``compact --dry-run`` resolves them (Pi's settings files, the model catalogue), once per model."""
    from pitools.core.compaction.settings import resolve_settings

    header = loaded.session.header or {}
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    seen: dict[Any, Any] = {}

    def settings_for(model: Any) -> Any:
        if model not in seen:
            resolved = resolve_settings(
                session_cwd=cwd,
                model=model,
                flags={"keep_recent_tokens": None, "reserve_tokens": None, "context_window": None},
                use_config=use_config,
            )
            seen[model] = (resolved.compaction_settings(), int(resolved.context_window.value))
        return seen[model]

    return settings_for


class RawLines:
    """``i`` → the text of entry ``i``'s line in the file (read in file order, one open file),
    or None when the entries are not the file's own (a migrated file) or the line is not UTF-8."""

    def __init__(self, loaded: Loaded) -> None:
        from pitools.core.session.load import LoadedSession

        self.path = loaded.session.path
        self.file: Any = None
        self.ok: bool
        if not isinstance(loaded, LoadedSession):  # only v3 files load lean: every line is the entry's own
            index: Any = loaded.index
            self.ok = True
            self.offsets: Any = index.offsets
            self.lengths: Any = index.lengths
        else:
            session = loaded.session
            self.ok = not session.needs_migration and session.migrated_values is None
            self.offsets = session.offsets
            lengths, positions = session.raw.lengths, session.positions
            self.lengths = _Lengths(lengths, positions)

    def __call__(self, i: int) -> bytes | None:
        if not self.ok:
            return None
        try:
            if self.file is None:
                self.file = open(self.path, "rb")  # noqa: SIM115 - closed in close()
            self.file.seek(self.offsets[i])
            raw: bytes = self.file.read(self.lengths[i]).strip()
            raw.decode("utf-8")
        except (OSError, IndexError, UnicodeDecodeError):
            return None
        return raw

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


#: Bytes of consecutive lines :func:`file_lines` reads at once.
_LINES_READ = 1 << 20


def file_lines(index: Any) -> Iterator[bytes | None]:
    """Each entry's line (as :class:`RawLines` gives it) from the lean loader's open file: the
    very file its scan read, a megabyte of consecutive lines per read instead of a seek and a
    read per entry. None where a line is not UTF-8 or the file no longer holds it (the caller
    then reads the entry back through the index, which notices a changed file)."""
    import os
    from bisect import bisect_right

    offsets, lengths, fd = index.offsets, index.lengths, index.fd
    n = len(offsets)
    i = 0
    while i < n:
        base = offsets[i]
        j = max(i + 1, bisect_right(offsets, base + _LINES_READ, i))
        want = offsets[j - 1] + lengths[j - 1] - base
        parts: list[bytes] = []
        got = 0
        while got < want:
            part = os.pread(fd, want - got, base + got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        data = b"".join(parts)
        for k in range(i, j):
            at = offsets[k] - base
            end = at + lengths[k]
            if end > len(data):
                yield None
                continue
            line = data[at:end].strip()
            if not line.isascii():
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    yield None
                    continue
            yield line
        i = j


class _Lengths:
    """Entry ``i``'s line length, through the loader's line positions."""

    def __init__(self, lengths: Any, positions: Any) -> None:
        self.lengths, self.positions = lengths, positions

    def __getitem__(self, i: int) -> int:
        return int(self.lengths[self.positions[i]])


def entry_texts(loaded: Loaded, *, embed_images: bool = True, start: int = 0) -> Iterator[bytes]:
    """The entries' JSON texts for the page (from position ``start``): the file's lines where
    they can be used."""
    from itertools import islice

    from pitools.core.views.viewer import all_entries
    from pitools.render.viewer_html import entry_texts as texts

    raw = RawLines(loaded)
    try:
        if start:
            yield from texts(islice(all_entries(loaded), start, None), lambda i: raw(i + start))
        elif embed_images and _lean_index(loaded) is not None:
            # Lines used as they are; an entry is parsed (and not kept) only where one cannot be.
            index: Any = loaded.index
            for i, line in enumerate(file_lines(index)):
                yield line if line is not None else next(texts(index.entries_at([i], keep=False)))
        elif embed_images:
            yield from texts(all_entries(loaded), raw)
        else:
            slim = ImagelessEntries(all_entries(loaded))

            def raw_unless_changed(i: int) -> bytes | None:
                return raw(i) if slim.changed != i else None

            yield from texts(slim, raw_unless_changed)
    finally:
        raw.close()


class ImagelessEntries:
    """The entries with the base64 data of message images left out (``--images placeholder``);
    ``changed`` is the position of the entry just yielded if it was changed, else -1."""

    def __init__(self, entries: Iterable[Any]) -> None:
        self.entries = entries
        self.changed = -1

    def __iter__(self) -> Iterator[Any]:
        for i, entry in enumerate(self.entries):
            self.changed = -1
            message = entry.get("message") if isinstance(entry, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if (
                isinstance(message, dict)
                and isinstance(content, list)
                and any(isinstance(c, dict) and c.get("type") == "image" for c in content)
            ):
                slim = [
                    {k: v for k, v in c.items() if k != "data"}
                    if isinstance(c, dict) and c.get("type") == "image"
                    else c
                    for c in content
                ]
                entry = {**entry, "message": {**message, "content": slim}}
                self.changed = i
            yield entry


def resume_parts(path: str) -> dict[str, str]:
    """What the page needs to show :func:`~pitools.core.views.resume.resume_command` for any entry:
    the command at the default leaf, and the two halves of the clone form around the entry's id
    (which the page quotes by the same rule)."""
    import os

    from pitools.core.views.resume import resume_command

    absolute = os.path.abspath(path)
    marker = "@ID@"
    clone = resume_command(absolute, marker, at_leaf=False)
    before, _, after = clone.partition(marker)
    return {"leaf": resume_command(absolute), "cloneBefore": before, "cloneAfter": after}


def load_for_page(file: str, *, freeze: bool = True) -> tuple[Loaded, EntryFacts]:
    """``file`` loaded for the page (the lean loader: entries read back from the file when
    needed keep the memory near the file's size), with the read model's facts of every entry
    gathered while the loader parses them (see :func:`viewer_chunks`). ``freeze=False`` for a
    server, which loads page after page (see :func:`~pitools.core.session.load.load`)."""
    from pitools.core.session.load import load
    from pitools.core.views.viewer import EntryFacts

    facts = EntryFacts()
    return load(file, keep="context", freeze=freeze, on_entry=facts), facts


def file_page(
    file: str,
    pick_leaf: Callable[[Loaded], Any],
    *,
    embed_images: bool = True,
    jobs: int = 1,
    shown: str | None = None,
    use_config: bool = True,
    freeze: bool = True,
) -> tuple[Loaded, Iterator[bytes]]:
    """``export --format html``: ``file`` loaded and its page (see :func:`viewer_chunks`), selecting
    ``pick_leaf(loaded)`` on open (None: Pi's default leaf); ``shown`` is the path the page
    names instead of ``file`` (see :meth:`~pitools.core.session.load.Loaded.show_as`).

    With ``jobs`` > 1, a big file's request check starts before this process reads the file, in
    a helper that reads it too (:func:`page_check_ahead`): the check's own reading overlaps
    this one, and the two processes share no parsed objects to copy on write."""
    ahead = page_check_ahead(file, pick_leaf, shown=shown, jobs=jobs, use_config=use_config)
    try:
        loaded, facts = load_for_page(file, freeze=freeze)
        loaded.show_as(shown)
        leaf = pick_leaf(loaded)
    except BaseException:
        if ahead is not None:
            ahead.cancel()
        raise
    pieces = viewer_chunks(
        loaded, leaf, embed_images=embed_images, facts=facts, jobs=jobs, ahead=ahead, use_config=use_config
    )
    return loaded, pieces


#: The page's request check of a file at least this big is made by a helper that reads the file
#: itself (:func:`page_check_ahead`); below it the file is read in a moment, and the check (if
#: its context is big) forks only after the read (see :func:`viewer_chunks`). Reading ahead
#: costs a second read, worth it where the read is long enough to overlap (the 10 MB sessions of
#: the floor guard do not use it: its long-lived process pays more for a fork than a command).
PARALLEL_CHECK_BYTES = 32 << 20

#: ... and only where the memory available is at least this many times the file's size: the
#: helper holds a copy of the session as big as this process's (up to 3 times the file).
AHEAD_MEMORY_FACTOR = 8


def page_check_ahead(
    file: str, pick_leaf: Callable[[Loaded], Any], *, shown: str | None, jobs: int, use_config: bool = True
) -> Background[tuple[Any, dict[str, Any]] | None] | None:
    """The request check of ``file``'s page at ``pick_leaf``, started in a forked helper that
    loads the file on its own (None: not worth a helper, or no room for one). Its result names
    what it read (:func:`_page_key`); :func:`viewer_chunks` uses it only where that matches
    what this process read (Pi may append in between), and checks here otherwise."""
    if jobs < 2:
        return None
    import marshal
    import os

    from pitools.ops.parallel import in_background, memory_available

    try:
        size = os.stat(file).st_size
    except OSError:
        return None
    if size < PARALLEL_CHECK_BYTES or size * AHEAD_MEMORY_FACTOR > memory_available():
        return None

    def check() -> tuple[Any, dict[str, Any]]:
        from pitools.core.session.load import load
        from pitools.ops.request import leaf_check

        loaded = load(file, keep="context")
        loaded.show_as(shown)
        leaf = pick_leaf(loaded)
        return _page_key(loaded, leaf), leaf_check(loaded, leaf, use_config=use_config)

    return in_background(check, encode=marshal.dumps, decode=marshal.loads, here=lambda: None)


def _page_key(loaded: Loaded, leaf: Any) -> tuple[Any, ...] | None:
    """What identifies the read of a lean-loaded file and the leaf chosen in it: the entries'
    count, where the last one ends, the header and the leaf (None for a file loaded whole: a
    v1/v2 file, whose check is always made where its page is)."""
    index: Any = loaded.index
    offsets = getattr(index, "offsets", None)
    if offsets is None or not offsets:
        return None
    header = loaded.session.header or {}
    return (len(index), offsets[-1] + index.lengths[-1], header.get("id"), leaf)


def viewer_chunks(
    loaded: Loaded,
    leaf: Any,
    *,
    live: dict[str, Any] | None = None,
    use_config: bool = True,
    embed_images: bool = True,
    facts: EntryFacts | None = None,
    jobs: int = 1,
    ahead: Background[tuple[Any, dict[str, Any]] | None] | None = None,
) -> Iterator[bytes]:
    """The page's UTF-8 pieces: the read model is computed first (before this returns), the
    entries serialized as written, and the request check last, in its own block after them
    (the page draws it once the entries are in). ``facts``: what :func:`load_for_page` gathered
    (else the entries are read again). ``jobs``: processes to use; with 2, a big context's
    request check runs in a forked helper while this process builds the read model and writes
    the entries (the same page; everything here when forking is not safe, e.g. in ``serve``'s
    threads). ``ahead``: the check started already (:func:`page_check_ahead`)."""
    from pitools.core.views.viewer import build_viewer_model
    from pitools.ops.request import leaf_check
    from pitools.render.viewer_html import page_chunks

    def check() -> dict[str, Any]:
        return leaf_check(loaded, leaf, use_config=use_config)

    later: Background[Any] | None = None
    if ahead is not None:
        started, later, key = ahead, ahead, _page_key(loaded, leaf)

        def check_ahead() -> dict[str, Any]:
            got = started.result()
            if key is not None and got is not None and got[0] == key:
                return got[1]
            return check()  # the helper read something else (or failed): checked here

        late_check = check_ahead
    elif jobs > 1 and _context_span(loaded, leaf) >= PARALLEL_CHECK_ENTRIES:
        import marshal

        from pitools.ops.parallel import in_background

        # The request check (pi-ai's body at the leaf, and its rules) needs nothing from the
        # read model: a forked helper builds it meanwhile and hands it back marshalled (plain
        # JSON values; anything else fails to marshal and is done here instead).
        later = background = in_background(check, encode=marshal.dumps, decode=marshal.loads)
        late_check = background.result
    else:
        late_check = check
    try:
        model = build_viewer_model(loaded, leaf, settings_resolver(loaded, use_config=use_config), facts=facts)
        first = first_view(loaded, model) if embed_images else None
        meta = model.meta_json()
        meta["resume"] = resume_parts(loaded.path)
    except BaseException:
        if later is not None:
            later.cancel()
        raise

    def late() -> dict[str, Any]:
        return {"check": late_check()}

    texts = entry_texts(loaded, embed_images=embed_images)
    pieces = page_chunks(meta, texts, title=f"{model.name} · pi session", live=live, first_view=first, late=late)
    return pieces if later is None else _cancelling(pieces, later)


def _cancelling(pieces: Iterator[bytes], job: Background[Any]) -> Iterator[bytes]:
    """``pieces``, stopping ``job`` if they are not all written (a failed or closed output)."""
    try:
        yield from pieces
    finally:
        job.cancel()  # nothing once the page has its result


#: A leaf whose context spans fewer entries than this is checked in this process: a fork
#: costs more than the check saves (the check builds and walks the body of that context).
PARALLEL_CHECK_ENTRIES = 2000


def _context_span(loaded: Loaded, leaf: Any) -> int:
    """How many entries of ``leaf``'s branch (Pi's default leaf for None) come after its newest
    compaction (all of them without one): the bulk of the context the request check builds
    (0 when the branch cannot be walked)."""
    from pitools.errors import PitoolsError

    index = loaded.index
    try:
        branch = index.branch_positions(index.leaf_id if leaf is None else leaf)
    except PitoolsError:  # a parentId loop: the check says so, at no cost
        return 0
    types = index.types
    for i in range(len(branch) - 1, -1, -1):
        if types[branch[i]] == "compaction":
            return len(branch) - i
    return len(branch)


#: The first view: the last entries of the initial path the transcript draws at once (the
#: page's FIRST), within this many bytes of JSON.
FIRST_VIEW_ENTRIES = 60
FIRST_VIEW_BYTES = 4_000_000


def first_view(loaded: Loaded, model: Any) -> list[tuple[int, bytes]]:
    """The texts of the entries the page opens on: the initial path's last entries, newest
    first, within the byte budget (the context at them is in the read model already)."""
    from pitools.render.viewer_html import entry_texts as texts

    path: list[int] = []
    p, seen = model.initial_leaf, set()
    while p >= 0 and p not in seen:
        seen.add(p)
        path.append(p)
        p = model.parent[p]
    wanted = path[:FIRST_VIEW_ENTRIES]
    raw = RawLines(loaded)
    out: list[tuple[int, bytes]] = []
    total = 0
    try:
        for q in wanted:
            text = raw(q)
            if text is None:
                entry = next(iter(all_entries_at(loaded, q)))
                text = next(texts([entry]))
            total += len(text)
            if total > FIRST_VIEW_BYTES:
                break
            out.append((q, text))
    finally:
        raw.close()
    return out


def all_entries_at(loaded: Loaded, pos: int) -> list[Any]:
    """The entry at ``pos`` (read back from the file under the lean loader, not kept)."""
    from pitools.core.session.load import LoadedSession

    if isinstance(loaded, LoadedSession):
        return [loaded.session.entries[pos]]
    index: Any = loaded.index
    return list(index.entries_at([pos], keep=False))


#: Bytes hashed per read when checking a session's prefix.
_HASH_CHUNK = 1 << 20


def _lean_index(loaded: Loaded) -> Any:
    """The lean loader's index (its open file and byte offsets), or None for a file loaded whole
    (a v1/v2 file Pi migrates: its entries are not the file's lines)."""
    from pitools.core.session.load import LoadedSession

    if isinstance(loaded, LoadedSession):
        return None
    index: Any = loaded.index
    return index if getattr(index, "fd", None) is not None else None


def _hash_upto(index: Any, end: int, digest: Any, start: int = 0) -> bool:
    """Feed bytes ``start``..``end`` of the loader's open file (the very content its entries came
    from, even if the path was replaced since) into ``digest``; False if the file is shorter."""
    import os

    at = start
    while at < end:
        chunk = os.pread(index.fd, min(_HASH_CHUNK, end - at), at)
        if not chunk:
            return False
        digest.update(chunk)
        at += len(chunk)
    return True


def session_prefix(loaded: Loaded) -> dict[str, Any] | None:
    """What a page holding all of ``loaded``'s entries sends back to ask for what came after
    them: ``{"have": entries, "bytes": where the last one's line ends, "sha": SHA-256 of the
    file up to there}``; None when it cannot be told (no entries, a migrated file)."""
    import hashlib

    index = _lean_index(loaded)
    if index is None or len(index) == 0:
        return None
    end = index.offsets[-1] + index.lengths[-1]
    digest = hashlib.sha256()
    if not _hash_upto(index, end, digest):
        return None
    return {"have": len(index), "bytes": end, "sha": digest.hexdigest()}


def unchanged_prefix(loaded: Loaded, have: int, upto: int, sha: str) -> bool:
    """Whether the file still starts with the bytes a page's entries came from: the same
    ``upto`` bytes (by content, not by count or id: an in-place redact keeps both), with its
    ``have``-th entry's line ending where it ended. Then the first ``have`` entries are the
    same ones (a v3 file's lines parse independently) and the page needs only the rest."""
    import hashlib
    import hmac

    index = _lean_index(loaded)
    if index is None or not 0 < have <= len(index):
        return False
    if index.offsets[have - 1] + index.lengths[have - 1] != upto:
        return False
    digest = hashlib.sha256()
    given = sha.encode("utf-8", "surrogatepass")  # any text a client sends (compare_digest wants ASCII str)
    return _hash_upto(index, upto, digest) and hmac.compare_digest(digest.hexdigest().encode("ascii"), given)


def close_loaded(loaded: Loaded) -> None:
    """Close the file a lean load keeps open (a long-running server loads sessions many times)."""
    index = _lean_index(loaded)
    if index is not None:
        index.close()
