"""Where Pi 1.6.0 (the reference) is installed on this machine: one lookup for the scripts and tests.

``scripts/gen_catalog.py`` imports it (a script's own folder is on ``sys.path``) and
``tests/support.py`` loads it by file path, so neither needs a ``sys.path`` change.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PI_PACKAGE = Path("node_modules") / "@earendil-works" / "pi-coding-agent"
#: Where the reference oracle sits under a shared folder (``/work/shared/reference/oracle.mjs``).
ORACLE = Path("shared") / "reference" / "oracle.mjs"


def pi_ref_dir(root: Path = ROOT) -> Path | None:
    """Pi 1.6.0's package folder: ``$PI_REF_DIR``, else a ``.pi-ref`` install in the checkout, in a
    sibling checkout (``../.pi-ref``, ``../main/.pi-ref``) or the shared one; None when none exists."""
    candidates = []
    if os.environ.get("PI_REF_DIR"):
        candidates.append(Path(os.environ["PI_REF_DIR"]))
    for base in (root, root.parent, root.parent / "main", root.parent.parent / "main", Path("/work/main")):
        candidates.append(base / ".pi-ref" / PI_PACKAGE)
    for path in candidates:
        if (path / "dist" / "config.js").is_file():
            return path
    return None


def pi_ai_dir(root: Path = ROOT) -> Path | None:
    """The ``@earendil-works/pi-ai`` package next to the reference (its model catalogue)."""
    ref = pi_ref_dir(root)
    if ref is None:
        return None
    for path in (ref / "node_modules" / "@earendil-works" / "pi-ai", ref.parent / "pi-ai"):
        if (path / "package.json").is_file():
            return path
    return None


def oracle_candidates(root: Path = ROOT) -> list[Path]:
    """Where :func:`oracle_path` looks, in order: ``$PI_ORACLE``, else ``shared/reference/oracle.mjs``
    beside the checkout (``/work/main`` -> ``/work/shared``) or beside the worktrees' folder
    (``/work/wt/NAME`` -> ``/work/shared``), then beside the folder the checkout's ``.pi-ref`` link
    points to (``.pi-ref`` -> ``/work/ref``), so a checkout anywhere with the reference link finds it."""
    if os.environ.get("PI_ORACLE"):
        return [Path(os.environ["PI_ORACLE"])]
    root = root.resolve()
    bases = [root.parent, root.parent.parent]
    link = root / ".pi-ref"
    if link.exists():
        bases.append(link.resolve().parent)
    return [base / ORACLE for base in dict.fromkeys(bases)]


def oracle_path(root: Path = ROOT) -> Path | None:
    """Pi's reference oracle (``oracle.mjs``), found as :func:`oracle_candidates` says; None when absent."""
    return next((path for path in oracle_candidates(root) if path.is_file()), None)
