"""Shared test helpers: where the golden corpus and the Pi reference are.

One place for the paths every test needs, instead of a ``GOLDEN = Path(__file__)...`` per file.
"""

from __future__ import annotations

import lzma
import os
import shutil
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden"

_PI_PACKAGE = Path("node_modules") / "@earendil-works" / "pi-coding-agent"


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
    from pitools.core.session.load import parse_json_line

    return parse_json_line(lzma.decompress((GOLDEN / case / f"pi.krt{krt}.json.xz").read_bytes()))[0]


def pi_ref_dir() -> Path | None:
    """Pi 1.6.0's package folder: ``$PI_REF_DIR``, else a ``.pi-ref`` install here, in a sibling
    checkout (``../.pi-ref``, ``../main/.pi-ref``) or the shared one; None when none exists."""
    candidates = []
    if os.environ.get("PI_REF_DIR"):
        candidates.append(Path(os.environ["PI_REF_DIR"]))
    for base in (ROOT, ROOT.parent, ROOT.parent / "main", ROOT.parent.parent / "main", Path("/work/main")):
        candidates.append(base / ".pi-ref" / _PI_PACKAGE)
    for path in candidates:
        if (path / "dist" / "config.js").is_file():
            return path
    return None


def pi_ai_dir() -> Path | None:
    """The ``@earendil-works/pi-ai`` package next to the reference (its model catalogue)."""
    ref = pi_ref_dir()
    if ref is None:
        return None
    for path in (ref / "node_modules" / "@earendil-works" / "pi-ai", ref.parent / "pi-ai"):
        if (path / "package.json").is_file():
            return path
    return None


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
