"""Record Pi's answers for tests/unit/piconfig/cases.py into pi_config_answers.json, and for the
broken configuration files of test_broken_config.py into pi_broken_files_answers.json (needs node
+ the reference)."""

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
BROKEN_FIXTURE = HERE / "pi_broken_files_answers.json"


def ask_node(
    ref: Path, script: str = "pi_config.mjs", case_list: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Run ``script`` (beside this file) under node on ``case_list`` (default: cases.py's)."""
    import os

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(cases() if case_list is None else case_list, fh)
        name = fh.name
    try:
        done = subprocess.run(
            ["node", str(HERE / script), name],
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
    from tests.unit.piconfig.broken_cases import BROKEN_CASES

    for path, answers in (
        (FIXTURE, ask_node(ref)),
        (BROKEN_FIXTURE, ask_node(ref, "pi_broken_files.mjs", BROKEN_CASES)),
    ):
        path.write_text(json.dumps({"cases": answers}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
