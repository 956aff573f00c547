"""``pitools watch``: follow a session file as Pi appends to it and keep its context meter current.

Following is a ``stat`` of the file on a timer that backs off while nothing changes (50 ms after a
change, doubling to at most ``max_delay``): no dependency, the same on every platform and file
system (inotify does not see writes made over NFS or from another container), and at most one
``stat`` a second on an idle session. Only the bytes Pi appended are read; complete lines are
parsed and passed to :func:`pitools.core.views.meter.advance`. The file is replayed (lean loader,
Pi's settings resolved as ``compact --dry-run`` resolves them) when that cannot say, and when the
file was replaced, truncated or rewritten under the part already read.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitools.core.views.meter import Reading, advance, model_label, reading
from pitools.errors import PitoolsError, SessionParseError

#: Bytes before the read offset compared on every change: a rewrite of the file shows there.
_TAIL = 64
MIN_DELAY = 0.05


@dataclass(frozen=True, slots=True)
class MeterConfig:
    """What sizes the meter beyond the session itself (the ``compact`` flags of the same names)."""

    reserve_tokens: int | None = None
    context_window: int | None = None
    use_config: bool = True


@dataclass(slots=True)
class Followed:
    """Where the follower is in the file, and the meter at that point."""

    path: str
    reading: Reading
    offset: int
    inode: int
    tail: bytes
    warnings: list[str] = field(default_factory=list)
    #: How the last reading was made: ``"replay"`` (the file read whole) or ``"append"``.
    how: str = "replay"


def measure(path: str, config: MeterConfig) -> Followed:
    """Replay ``path`` at Pi's default leaf and read the meter; the offset is the end of the last
    complete line read (a line Pi is still writing is read again once it is whole)."""
    from pitools.core.context.build import BranchKeys, estimate_projected_context_tokens, replay_context
    from pitools.core.session.load import KEEP_CONTEXT, load
    from pitools.ops.compaction import resolve_session_settings

    for _ in range(5):
        try:
            before = os.stat(path)
        except OSError as exc:  # the loader's words for it
            raise SessionParseError(f"cannot read file: {exc.strerror or exc}", path=path) from None
        if not stat.S_ISREG(before.st_mode):
            # A pipe or a device has no end to follow (and reading one twice would block).
            message = "not a regular file: watch follows a session file ('-' takes a pipe with --once)"
            raise PitoolsError(message, path=path)
        loaded: Any = load(path, keep=KEEP_CONTEXT)
        try:
            replay: Any = replay_context(loaded.index, loaded.leaf(None))
            keys = BranchKeys(replay.path_ids or [], replay.path_types)
            tokens = estimate_projected_context_tokens(replay.projection, keys, replay.token_estimates).tokens
            model = replay.projection.model_ref()
            resolved = resolve_session_settings(
                loaded,
                model,
                {"reserve_tokens": config.reserve_tokens, "context_window": config.context_window},
                use_config=config.use_config,
            )
        finally:
            close = getattr(loaded.index, "close", None)
            if close is not None:
                close()
        after = os.stat(path)
        if (after.st_ino, after.st_size, after.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
            continue  # Pi wrote while we read: read again
        with open(path, "rb") as f:
            start = max(0, before.st_size - (1 << 16))
            f.seek(start)
            end_part = f.read(before.st_size - start)
        cut = end_part.rfind(b"\n")
        offset = start + cut + 1 if cut >= 0 else (0 if start == 0 else before.st_size)
        with open(path, "rb") as f:
            tail = _read_tail(f, offset)
        leaf = replay.path_ids[-1] if replay.path_ids else None
        meter = reading(
            leaf,
            tokens,
            int(resolved.context_window.value),
            resolved.compaction_settings(),
            model_label(model),
        )
        return Followed(path, meter, offset, before.st_ino, tail, list(getattr(resolved, "warnings", []) or []))
    raise PitoolsError("the file kept changing while it was read; try again", path=path)


def _read_tail(f: Any, offset: int) -> bytes:
    start = max(0, offset - _TAIL)
    f.seek(start)
    return bytes(f.read(offset - start))


def step(state: Followed, config: MeterConfig) -> tuple[Followed, bool]:
    """Look at the file once: ``(state, changed)``. Reads only what was appended since the last
    look, unless the file was replaced or rewritten (then it is replayed)."""
    from pitools.core.js.json.parse import parse_json_line

    try:
        st = os.stat(state.path)
    except FileNotFoundError:
        return state, False  # being replaced (or deleted): look again later
    if st.st_ino != state.inode or st.st_size < state.offset:
        return _replayed(state, config), True
    if st.st_size == state.offset:
        return state, False
    with open(state.path, "rb") as f:
        if _read_tail(f, state.offset) != state.tail:
            return _replayed(state, config), True
        f.seek(state.offset)
        data = f.read(st.st_size - state.offset)
    cut = data.rfind(b"\n")
    if cut < 0:
        return state, False  # a line Pi has not finished writing
    complete = data[: cut + 1]
    entries: list[Any] = []
    for line in complete.split(b"\n"):
        if not line.strip():
            continue
        try:
            entries.append(parse_json_line(line)[0])
        except ValueError:
            return _replayed(state, config), True
    new = advance(state.reading, entries)
    if new is None:
        return _replayed(state, config), True
    offset = state.offset + len(complete)
    tail = (state.tail + complete)[-_TAIL:]
    return Followed(state.path, new, offset, state.inode, tail, [], "append"), new != state.reading


def _replayed(state: Followed, config: MeterConfig) -> Followed:
    fresh = measure(state.path, config)
    fresh.how = "replay"
    return fresh


def follow(
    path: str,
    config: MeterConfig,
    show: Callable[[Followed], None],
    *,
    warn: Callable[[str], None],
    max_delay: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Show the meter, then again each time it changes, until ``stop()`` (or Ctrl-C, which the
    caller handles). A replay that fails (the file is mid-rewrite, or broken) is reported once
    with ``warn`` and tried again at the next change."""
    state = measure(path, config)
    for text in state.warnings:
        warn(text)
    show(state)
    delay = MIN_DELAY
    # After a failed replay: the file's (inode, size, mtime) then, and what went wrong; the
    # replay is tried again only once the file changes.
    failed: tuple[tuple[int, int, int], str] | None = None
    while not stop():
        sleep(delay)
        delay = min(delay * 2, max_delay)
        try:
            if failed is not None:
                if _signature(path) == failed[0]:
                    continue
                new = measure(path, config)
            else:
                new, changed = step(state, config)
                if not changed:
                    continue
        except (PitoolsError, OSError) as exc:
            text = str(exc)
            try:
                signature = _signature(path)
            except OSError:
                signature = (-1, -1, -1)
            if failed is None or failed[1] != text:
                warn(f"{text} (still watching)")
            failed = (signature, text)
            continue
        failed = None
        delay = MIN_DELAY
        if new.reading != state.reading:
            show(new)
        state = new


def _signature(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns)
