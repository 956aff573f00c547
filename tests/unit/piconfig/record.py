"""Record Pi's answers for tests/unit/piconfig/cases.py into pi_config_answers.json (needs node + the reference)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support import pi_ref_dir
from tests.unit.piconfig.cases import cases

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "pi_config_answers.json"


def ask_node(ref: Path) -> list[dict[str, Any]]:
    import os

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(cases(), fh)
        name = fh.name
    try:
        done = subprocess.run(
            ["node", str(HERE / "pi_config.mjs"), name],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PI_REF_DIR": str(ref)},
        )
    finally:
        Path(name).unlink()
    answers: list[dict[str, Any]] = json.loads(done.stdout)["cases"]
    return answers


def main() -> int:
    ref = pi_ref_dir()
    if ref is None:
        print("record: the reference (PI_REF_DIR) was not found", file=sys.stderr)
        return 1
    FIXTURE.write_text(json.dumps({"cases": ask_node(ref)}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
