#!/usr/bin/env python3
"""Write the files generated from the pydantic models in ``pitools/core/session/schema.py``.

* ``schemas/session.schema.json``: the JSON Schema of one line of a v3 session file (the header or
  any entry);
* ``pitools/core/session/entry_precheck.py``: the fast pre-check validate runs on every entry, as plain
  Python that imports no pydantic (see ``pitools/core/session/schema_check.py``).

They are generated, never edited: change the models, run this script, commit the results.
``tests/unit/test_model.py`` fails when a committed file and a fresh generation differ.

Usage: scripts/gen_schema.py [--check]   (--check: exit 1 if a file is out of date)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "schemas" / "session.schema.json"
CHECK_TARGET = ROOT / "pitools" / "core" / "session" / "entry_precheck.py"


def render() -> str:
    """The schema file's exact text (2-space indent, trailing newline)."""
    sys.path.insert(0, str(ROOT))
    from pitools.core.session.schema import session_json_schema

    return json.dumps(session_json_schema(), indent=2, ensure_ascii=False) + "\n"


def render_check() -> str:
    """The fast check module's exact text (already in ``ruff format`` style)."""
    sys.path.insert(0, str(ROOT))
    from pitools.core.session.schema_check import render_entry_check

    return render_entry_check()


def main(argv: list[str]) -> int:
    outputs = {TARGET: render(), CHECK_TARGET: render_check()}
    if "--check" in argv:
        stale = [p for p, text in outputs.items() if (p.read_text(encoding="utf-8") if p.exists() else "") != text]
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date; run scripts/gen_schema.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
