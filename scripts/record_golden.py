#!/usr/bin/env python3
"""Record Pi 1.6.0's results for every golden session (``make golden``).

For each ``golden/<case>/session.jsonl`` this runs the reference oracle (``$PI_ORACLE``, else
``shared/reference/oracle.mjs`` above the checkout or above its ``.pi-ref`` link) at every leaf,
once per ``keepRecentTokens`` value, and stores its JSON as ``golden/<case>/pi.krt<N>.json.xz``.
The tests read those recordings; they never need node. Needs node and the reference package:
``$PI_REF_DIR`` or a ``.pi-ref`` install (found as ``scripts/pi_reference.py`` finds it), else this
script installs ``@earendil-works/pi-coding-agent@1.6.0`` into ``.pi-ref/`` (npm registry access).

Usage: scripts/record_golden.py [CASE ...]   (default: every case)
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def _pi_reference() -> Any:
    """``scripts/pi_reference.py``, the one lookup of the reference, loaded by path (the tests load
    this script by path too, without ``scripts/`` on ``sys.path``)."""
    module = sys.modules.get("pi_reference")
    if module is None:
        spec = importlib.util.spec_from_file_location("pi_reference", Path(__file__).with_name("pi_reference.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["pi_reference"] = module
        spec.loader.exec_module(module)
    return module


pi_reference = _pi_reference()

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
KEEP_RECENT = (20000, 2000, 300)
PI_PACKAGE = "@earendil-works/pi-coding-agent@1.6.0"


def oracle_script(root: Path = ROOT) -> Path:
    """The reference oracle, found as the tests find the reference (``scripts/pi_reference.py``):
    ``$PI_ORACLE``, else ``shared/reference/oracle.mjs`` above the checkout or above its ``.pi-ref``
    link, so a worktree finds it too. Exits with one line when it is nowhere."""
    found: Path | None = pi_reference.oracle_path(root)
    if found is not None:
        return found
    if os.environ.get("PI_ORACLE"):
        sys.exit(f"record_golden: PI_ORACLE={os.environ['PI_ORACLE']} is not a file")
    sys.exit(
        f"record_golden: Pi's oracle ({pi_reference.ORACLE}) is not above {root} nor above its .pi-ref link; "
        "set PI_ORACLE to its path"
    )


def reference_dir() -> Path:
    """Pi's package: ``$PI_REF_DIR`` or an existing ``.pi-ref`` install (``pi_reference.pi_ref_dir``),
    else installed into ``.pi-ref/`` from npm."""
    found = pi_reference.pi_ref_dir()
    if found is not None:
        return Path(found)
    scratch = ROOT / ".pi-ref"
    pkg = scratch / "node_modules" / "@earendil-works" / "pi-coding-agent"
    if not pkg.is_dir():
        scratch.mkdir(exist_ok=True)
        (scratch / "package.json").write_text('{"name": "pi-ref", "private": true}\n')
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", PI_PACKAGE],
            cwd=scratch,
            check=True,
        )
    return pkg


def record(case: Path, oracle: Path, ref: Path) -> str:
    session = case / "session.jsonl"
    env = dict(os.environ, PI_REF_DIR=str(ref), TZ="UTC")
    for krt in KEEP_RECENT:
        cmd = ["node", "--max-old-space-size=3072", str(oracle), str(session), "--all-leaves"]
        cmd += ["--keep-recent-tokens", str(krt)]
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=False)
        if proc.returncode != 0:
            err = {"error": "crash", "exitCode": proc.returncode, "stderrTail": proc.stderr.decode()[-2000:]}
            blob = json.dumps(err).encode()
        else:
            blob = proc.stdout  # the oracle's own text: lone surrogates stay escaped
        (case / f"pi.krt{krt}.json.xz").write_bytes(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))
    return case.name


def main(argv: list[str]) -> int:
    oracle = oracle_script()
    os.environ.setdefault("PI_ORACLE", str(oracle))  # the case modules that run it (fork_cases) find it too
    ref = reference_dir()
    # Sessions compacted by pitools (builtin and a local HTTP model) are golden cases too.
    sys.path.insert(0, str(ROOT))
    from tests.golden.compacted_cases import write_all
    from tests.golden.fork_cases import write_all as write_fork_cases

    write_all()
    from tests.golden import navigate_cases

    navigated = navigate_cases.write_applied()  # golden/navigated-*: sessions pitools navigated
    write_fork_cases(argv)  # golden/{fork,clone}-*: also records each named case's source at the fork point (node)
    from tests.golden.repair_cases import record_extra
    from tests.golden.repair_cases import write_all as write_repair_cases

    for folder in write_repair_cases():  # golden/{repair,slim}-*: Pi on original.jsonl / repaired.jsonl too
        if not argv or folder.name in argv:
            record_extra(folder, oracle, ref)
    from tests.golden import heal_cases

    for folder in heal_cases.write_all():  # golden/heal-*: Pi on healed.jsonl / healed-new.jsonl too
        if not argv or folder.name in argv:
            heal_cases.record_extra(folder, oracle, ref)
    from tests.golden import heal_generated

    for case in heal_generated.GENERATED:  # golden/heal-*-size: generated wedges, recorded as hashes
        if not argv or case in argv:
            heal_generated.record_case(case, oracle, ref)
    named = [GOLDEN / a for a in argv if a not in heal_generated.GENERATED]  # those have no session.jsonl
    cases = named if argv else sorted(p.parent for p in GOLDEN.glob("*/session.jsonl"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name in pool.map(lambda c: record(c, oracle, ref), cases):
            print(f"recorded {name}", file=sys.stderr)
    os.environ.setdefault("PI_REF_DIR", str(ref))
    for folder in navigated:  # Pi's context at the new leaf and at the landing, from pitools' file
        navigate_cases.record_applied_contexts(folder)
    if not argv or "navigate" in argv:
        navigate_cases.record_all()  # golden/navigate/: Pi's navigateTree on each edge case
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
