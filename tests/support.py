"""Shared test helpers: where the golden corpus and the Pi reference are.

One place for the paths every test needs, instead of a ``GOLDEN = Path(__file__)...`` per file.
"""

from __future__ import annotations

import importlib.util
import lzma
import shutil
import sys
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
    the real entry point, :func:`pitools.cli.main` (fast paths, click, the one error handler).

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


def recorded_leaves(krt: int = 20000) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(case, leaf, Pi's whole record, Pi's byLeaf record) for every leaf Pi answered without error."""
    out = []
    for case in golden_cases():
        record = golden_recording(case, krt)
        for leaf, view in (record.get("byLeaf") or {}).items():
            if isinstance(view, dict) and "error" not in view and view.get("leafExists"):
                out.append((case, leaf, record, view))
    return out


def case_ids(items: list[tuple[Any, ...]]) -> list[str]:
    return [f"{item[0]}@{item[1]}" for item in items]
