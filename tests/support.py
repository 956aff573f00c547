"""Shared test helpers: where the golden corpus and the Pi reference are.

One place for the paths every test needs, instead of a ``GOLDEN = Path(__file__)...`` per file.
"""

from __future__ import annotations

import importlib.util
import json
import lzma
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden"


def golden_session(case: str) -> Path:
    """``golden/<case>/session.jsonl``."""
    return GOLDEN / case / "session.jsonl"


def golden_cases() -> list[str]:
    """Every golden case name, sorted."""
    return sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


@cache
def golden_recording(case: str, krt: int = 20000) -> Any:
    """Pi's recorded view of a golden case (``pi.krt<krt>.json.xz``); shared: do not modify it."""
    # The loader's parser: golden/hostile-deep-nesting nests deeper than json allows.
    from pitools.core.js.json.parse import parse_json_line

    return parse_json_line(lzma.decompress((GOLDEN / case / f"pi.krt{krt}.json.xz").read_bytes()))[0]


class Pitools:
    """``pitools`` as something :class:`click.testing.CliRunner` can invoke: each invocation runs
    the real entry point, :func:`pitools.cli.main` (the warm search, click, the one error handler).

    ``CliRunner().invoke(PITOOLS, args)`` swaps the process's streams and environment as it does
    for a click command; ``main()`` picks them up. ``Pitools(fast=False)`` always runs click.
    """

    name = "pitools"

    def __init__(self, fast: bool = True) -> None:
        self.fast = fast

    def main(self, args: Any = (), prog_name: str | None = None, **extra: Any) -> None:
        from pitools.cli import main

        raise SystemExit(main(list(args), fast=self.fast))


#: The real entry point, for ``CliRunner().invoke(PITOOLS, args)``.
PITOOLS = Pitools()


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (scripts/ is no package), loaded once by file path.

    Registered in ``sys.modules`` under its own name, as dataclasses need; ``sys.path`` is left alone.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def pi_ref_dir() -> Path | None:
    """Pi 1.6.0's package folder (``scripts/pi_reference.py``: $PI_REF_DIR or a ``.pi-ref`` install)."""
    found: Path | None = load_script("pi_reference").pi_ref_dir()
    return found


def pi_ai_dir() -> Path | None:
    """The ``@earendil-works/pi-ai`` package next to the reference (its model catalogue)."""
    found: Path | None = load_script("pi_reference").pi_ai_dir()
    return found


def node() -> str | None:
    """The node executable, when there is one."""
    return shutil.which("node")


#: ``parametrize(..., indirect=LAZY)``: the ``record`` and ``view`` fixtures (tests/conftest.py) load
#: Pi's recording when a test runs, not when the suite is collected (every xdist worker collects).
LAZY = ("record", "view")

_OUTLINES = ROOT / ".pytest_cache" / "pitools-golden-outlines.json"


def _outline(value: Any, depth: int) -> Any:
    """``value`` cut to what collection-time filters look at: dicts to ``depth`` levels (then their
    keys only), lists as ``[]`` or ``[None]`` (empty or not), scalars as they are."""
    if isinstance(value, dict):
        return {k: _outline(v, depth - 1) if depth > 0 else None for k, v in value.items()}
    if isinstance(value, list):
        return [None] if value else []
    return value


def _record_outline(record: Any) -> Any:
    """What collection-time filters see of a recording: its top-level fields one level deep, and
    for each leaf of ``byLeaf`` its fields two levels deep (e.g. ``view["compaction"]``'s keys)."""
    outline = {k: _outline(v, 1) for k, v in record.items() if k != "byLeaf"}
    by_leaf = record.get("byLeaf")
    if isinstance(by_leaf, dict):
        outline["byLeaf"] = {leaf: _outline(view, 2) for leaf, view in by_leaf.items()}
    return outline


@cache
def _outlines() -> dict[str, Any]:
    """Every recording's outline, from the disk cache where the recording has not changed since
    (same size and mtime); the others are parsed once and the cache is written once."""
    try:
        cached: dict[str, Any] = json.loads(_OUTLINES.read_bytes())
    except (OSError, ValueError):
        cached = {}
    outlines: dict[str, Any] = {}
    stale = False
    for path in sorted(GOLDEN.glob("*/pi.krt*.json.xz")):
        st = path.stat()
        key = f"{path.parent.name}/{path.name}"
        stamp = [st.st_size, st.st_mtime_ns]
        hit = cached.get(key)
        if hit is None or hit["stamp"] != stamp:
            case, krt = path.parent.name, int(path.name[len("pi.krt") : -len(".json.xz")])
            hit = {"stamp": stamp, "outline": _record_outline(golden_recording(case, krt))}
            stale = True
        outlines[key] = hit
    if stale or len(outlines) != len(cached):
        try:  # a private temp name per process, then one rename: xdist workers may race here
            _OUTLINES.parent.mkdir(parents=True, exist_ok=True)
            tmp = _OUTLINES.with_name(f"{_OUTLINES.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(outlines))
            os.replace(tmp, _OUTLINES)
        except OSError:
            pass
    return outlines


def recording_outline(case: str, krt: int = 20000) -> Any:
    """The shape of :func:`golden_recording` that collection-time filters need, from a cache in
    .pytest_cache keyed by each recording's size and mtime: collecting the suite (which every
    xdist worker does) then parses none of the 380 MB of recordings."""
    return _outlines()[f"{case}/pi.krt{krt}.json.xz"]["outline"]


Where = Callable[[Any, dict[str, Any]], Any]


def recorded_leaves(krt: int = 20000, where: Where | None = None, with_krt: bool = False) -> list[Any]:
    """``pytest.param(case, leaf, record, view[, krt])`` for every leaf Pi answered without error
    and that ``where(record, view)`` keeps (it sees outlines: see :func:`recording_outline`).

    ``record`` and ``view`` are loaded when the test runs: parametrize with ``indirect=LAZY``."""
    import pytest

    out = []
    for case in golden_cases():
        record = recording_outline(case, krt)
        for leaf, view in (record.get("byLeaf") or {}).items():
            if not (isinstance(view, dict) and "error" not in view and view.get("leafExists")):
                continue
            if where is not None and not where(record, view):
                continue
            values: tuple[Any, ...] = (case, leaf, (case, krt), (case, krt, leaf))
            ident = f"{case}@{leaf}"
            if with_krt:
                values, ident = (*values, krt), f"{ident}/{krt}"
            out.append(pytest.param(*values, id=ident))
    return out


def recorded_view(case: str, krt: int, leaf: str) -> Any:
    """Pi's ``byLeaf`` record of ``leaf`` (the ``view`` fixture)."""
    return golden_recording(case, krt)["byLeaf"][leaf]


def fast_sample(items: list[Any], keep: int) -> list[Any]:
    """``items`` for ``parametrize``, all but ``keep`` of them (spread evenly) marked ``slow``: the
    fast loop (``make test``) runs a sample of a long sweep, ``make check`` and CI run all of it."""
    import pytest

    if len(items) <= keep:
        return list(items)
    chosen = {round(i * (len(items) - 1) / (keep - 1)) for i in range(keep)} if keep > 1 else {0}
    return [item if i in chosen else pytest.param(item, marks=pytest.mark.slow) for i, item in enumerate(items)]


@contextmanager
def serving(session_dir: Path) -> Iterator[Any]:
    """``pitools serve``'s app over ``session_dir`` on a free loopback port, in a thread; yields
    the app (its ``port`` and ``token``)."""
    import threading

    from pitools.cli.serve_app import App, make_server

    app = App(session_dir=str(session_dir))
    srv = make_server(app, 0)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield app
    finally:
        srv.shutdown()
        srv.server_close()


def request_mismatch(record: dict[str, Any], build: Callable[[], Any], where: str) -> tuple[bool, str | None]:
    """Compare one pi-ai recording (``payload`` text or ``error``) with pitools' ``build()``.

    Returns (whether a body was compared, what differs or None): pitools must fail where pi-ai
    failed, reach the same thinking level, and write the same ``JSON.stringify`` bytes."""
    from pitools.core.js.json.encode import to_json_bytes
    from pitools.core.js.json.parse import parse_json_line
    from pitools.errors import PitoolsError

    try:
        built = build()
    except PitoolsError as exc:
        return False, (f"{where}: pitools failed ({exc}) where pi-ai built a body" if "payload" in record else None)
    if "payload" not in record:
        return False, f"{where}: pi-ai failed ({record.get('error')}) where pitools built a body"
    if built.thinking_level != record["level"]:
        return True, f"{where}: thinking level {built.thinking_level}, pi-ai {record['level']}"
    got = to_json_bytes(built.payload)
    expected = record["payload"].encode("utf-8", "surrogatepass")
    if got == expected:
        return True, None
    same_value = parse_json_line(got)[0] == parse_json_line(expected)[0]
    return True, f"{where}: {'key order/number form differs' if same_value else 'body differs'}"
