#!/usr/bin/env python3
"""Write ``schemas/session.schema.json`` from the pydantic models in ``pitools/core/model.py``.

The schema describes one line of a v3 session file (the header or any entry). It is generated,
never edited: change the models, run this script, commit both. ``tests/unit/test_model.py``
fails when the committed file and a fresh generation differ.

Usage: scripts/gen_schema.py [--check]   (--check: exit 1 if the file is out of date)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "schemas" / "session.schema.json"


def render() -> str:
    """The schema file's exact text (2-space indent, trailing newline)."""
    sys.path.insert(0, str(ROOT))
    from pitools.core.model import session_json_schema

    return json.dumps(session_json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date; run scripts/gen_schema.py", file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
