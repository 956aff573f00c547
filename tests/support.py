"""Shared test helpers: where the golden corpus and the Pi reference are.

One place for the paths every test needs, instead of a ``GOLDEN = Path(__file__)...`` per file.
"""

from __future__ import annotations

import importlib.util
import json
import lzma
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


@contextmanager
def cli_recursion_limit() -> Iterator[None]:
    """Run with the recursion limit ``pitools`` itself raises to (``pitools.cli.RECURSION_LIMIT``),
    then put the previous one back: golden/hostile-deep-nesting holds values 1,500 levels deep,
    which comparing, copying and the exact serializer walk recursively. (Hypothesis lowers the
    limit for each example and warns when a test leaves it changed.)"""
    from pitools.cli import RECURSION_LIMIT

    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def free_usage(input_: int = 1, output: int = 1) -> dict[str, Any]:
    """A Pi usage record of ``input_`` + ``output`` tokens, no cache, at no cost (a new dict each call)."""
    zero_cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "input": input_,
        "output": output,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": input_ + output,
        "cost": zero_cost,
    }


def pi_project(tmp_path: Path, monkeypatch: Any, project: Path, agent: Path | None = None) -> Path:
    """Work in ``project`` (made here) with a private Pi: ``HOME`` is ``tmp_path/home``, the agent
    dir ``agent`` (default ``tmp_path/agent``), pitools' cache ``tmp_path/cache``, and no session
    dir of the user's. Returns the folder Pi keeps this project's sessions in, made empty."""
    from pitools.core.session.locate import default_session_dir

    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    env = {"HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent or tmp_path / "agent")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("PITOOLS_CACHE_DIR", str(tmp_path / "cache"))
    folder = Path(default_session_dir(str(project), env))
    folder.mkdir(parents=True)
    return folder


def assert_reaped(helper: Any) -> None:
    """A forked helper is gone and waited for: no zombie left behind."""
    import os

    import pytest

    with pytest.raises(ChildProcessError):
        os.waitpid(helper.pid, os.WNOHANG)


def golden_session(case: str) -> Path:
    """``golden/<case>/session.jsonl``."""
    return GOLDEN / case / "session.jsonl"


def golden_cases() -> list[str]:
    """Every golden case name, sorted."""
    return sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


@cache
def golden_recording(case: str, krt: int = 20000) -> Any:
    """Pi's recorded view of a golden case (``pi.krt<krt>.json.xz``); shared: do not modify it."""
    return _parse_recording((GOLDEN / case / f"pi.krt{krt}.json.xz").read_bytes())


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

#: What collecting the suite reads of Pi's recordings, committed so that a fresh clone (every CI
#: run, every xdist worker) parses none of the 450 MB of them: ``make golden-index`` rewrites it,
#: tests/golden/test_collection_index.py fails when it is stale.
INDEX = GOLDEN / "collection-index.json"
#: The fields of a recording (``RECORD_FIELDS``) and of each ``byLeaf`` view (``VIEW_FIELDS``) the
#: index keeps, dicts as their keys and lists as ``[]``/``[None]``; plus ``errors``, every distinct
#: ``"error"`` string anywhere in the recording. A collection-time filter may read only these.
RECORD_FIELDS = ("error", "invalid", "leafId", "migrated", "stats")
VIEW_FIELDS = ("compaction", "error", "leafExists", "llmMessages", "path", "tokenEstimates")


class Outline(dict[str, Any]):
    """A recording's (or a view's) fields as the index keeps them. Asking for a field the index
    does not keep raises: the filter would otherwise quietly keep or drop every case."""

    def __init__(self, data: dict[str, Any], fields: frozenset[str]) -> None:
        super().__init__(data)
        self._fields = fields

    def _known(self, key: object) -> None:
        if key not in self._fields:
            raise KeyError(
                f"{key!r} is not in golden/collection-index.json: add it to tests/support.py's "
                "RECORD_FIELDS/VIEW_FIELDS and run `make golden-index`"
            )

    def __getitem__(self, key: str) -> Any:
        self._known(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._known(key)
        return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._known(key)
        return super().get(key, default)


def _shape(value: Any) -> Any:
    """A dict as its keys (``{key: None}``), a list as ``[]`` or ``[None]``, a scalar as it is."""
    if isinstance(value, dict):
        return dict.fromkeys(value)
    if isinstance(value, list):
        return [None] if value else []
    return value


def _errors(value: Any, found: set[str]) -> set[str]:
    """Every string under an ``"error"`` key anywhere in ``value`` (iteratively: recordings nest deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            error = item.get("error")
            if isinstance(error, str):
                found.add(error)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def record_outline(record: Any) -> dict[str, Any]:
    """What the index keeps of one parsed recording (plain JSON data)."""
    outline: dict[str, Any] = {k: _shape(record[k]) for k in RECORD_FIELDS if k in record}
    by_leaf = record.get("byLeaf")
    if isinstance(by_leaf, dict):
        outline["byLeaf"] = {
            leaf: {k: _shape(view[k]) for k in VIEW_FIELDS if k in view} if isinstance(view, dict) else _shape(view)
            for leaf, view in by_leaf.items()
        }
    outline["errors"] = sorted(_errors(record, set()))
    return outline


def recording_paths() -> list[Path]:
    """Every recording the index covers: ``golden/<case>/pi.krt<N>.json.xz``."""
    return sorted(GOLDEN.glob("*/pi.krt*.json.xz"))


def _index_key(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def recording_text(path: Path) -> bytes:
    """The JSON text of one of Pi's recordings under golden/ (``*.json.xz``): the one place that
    knows how they are stored. Not cached: a test that keeps one pays for it."""
    return lzma.decompress(path.read_bytes())


def _parse_recording(data: bytes) -> Any:
    # The loader's parser: golden/hostile-deep-nesting nests deeper than json allows.
    from pitools.core.js.json.parse import parse_json_line

    return parse_json_line(lzma.decompress(data))[0]


def index_fields() -> dict[str, list[str]]:
    return {"record": list(RECORD_FIELDS), "view": list(VIEW_FIELDS)}


def read_index() -> dict[str, Any]:
    """The committed index (empty when it is missing, unreadable or for other fields)."""
    try:
        index: dict[str, Any] = json.loads(INDEX.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict) or index.get("fields") != index_fields():
        return {}
    recordings = index.get("recordings")
    return recordings if isinstance(recordings, dict) else {}


def build_index() -> dict[str, Any]:
    """Every recording's index entry, reusing the committed entries whose content hash still matches."""
    committed = read_index()
    entries: dict[str, Any] = {}
    for path in recording_paths():
        data = path.read_bytes()
        digest = _digest(data)
        hit = committed.get(_index_key(path))
        if not (isinstance(hit, dict) and hit.get("sha256") == digest):
            hit = {"sha256": digest, "outline": record_outline(_parse_recording(data))}
        entries[_index_key(path)] = hit
    return entries


def write_index() -> Path:
    """Write ``golden/collection-index.json``: one recording a line, so a re-record changes only its lines."""
    entries = build_index()
    lines = [f"{json.dumps(key)}: {json.dumps(entries[key], sort_keys=True, separators=(',', ':'))}" for key in entries]
    fields = json.dumps(index_fields(), separators=(",", ":"))
    INDEX.write_text(f'{{"fields": {fields},\n"recordings": {{\n' + ",\n".join(lines) + "\n}}\n", encoding="utf-8")
    return INDEX


def _wrap(outline: dict[str, Any]) -> Outline:
    wrapped = dict(outline)
    by_leaf = outline.get("byLeaf")
    if isinstance(by_leaf, dict):
        view_fields = frozenset(VIEW_FIELDS)
        wrapped["byLeaf"] = {
            leaf: Outline(view, view_fields) if isinstance(view, dict) else view for leaf, view in by_leaf.items()
        }
    return Outline(wrapped, frozenset((*RECORD_FIELDS, "byLeaf", "errors")))


@cache
def _outlines() -> dict[str, Outline]:
    """Every recording's outline: from the committed index where its content hash matches, else
    parsed from the recording itself (one just added or re-recorded, until ``make golden-index``)."""
    committed = read_index()
    outlines: dict[str, Outline] = {}
    for path in recording_paths():
        data = path.read_bytes()
        hit = committed.get(_index_key(path))
        if isinstance(hit, dict) and hit.get("sha256") == _digest(data):
            outline = hit["outline"]
        else:
            outline = record_outline(_parse_recording(data))
        outlines[_index_key(path)] = _wrap(outline)
    return outlines


def recording_outline(case: str, krt: int = 20000) -> Outline:
    """The fields of :func:`golden_recording` that collection-time filters may read (see ``INDEX``):
    collecting the suite, which every xdist worker does, then parses no recording."""
    return _outlines()[f"{case}/pi.krt{krt}.json.xz"]


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


@cache
def golden_requests(case: str, name: str = "requests") -> dict[str, Any]:
    """pi-ai's recorded request bodies for a golden case (``golden/<case>/<name>.jsonl``, see
    scripts/golden_store.py; a ``.json.gz`` not yet converted reads too); shared: do not modify it."""
    store = load_script("golden_store")
    found: dict[str, Any] = store.read_recording(store.stored(GOLDEN / case, name))
    return found


def golden_request_cases(name: str = "requests") -> list[str]:
    """The golden cases with a ``<name>`` recording of pi-ai's request bodies, sorted."""
    return sorted({p.parent.name for ext in (".jsonl", ".json.gz") for p in GOLDEN.glob(f"*/{name}{ext}")})


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


if __name__ == "__main__":  # make golden-index
    print(f"wrote {write_index().relative_to(ROOT)}")
