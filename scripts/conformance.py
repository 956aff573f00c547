#!/usr/bin/env python3
"""Re-record every golden expectation with a given Pi release and show what changed (``make conformance``).

pitools mirrors Pi 1.6.0, and every expected value in ``golden/`` is Pi's own output recorded by the
reference oracle (``*.json.xz`` beside each ``session.jsonl``). When Pi releases a new version, this
answers "does anything pitools mirrors behave differently now?" in one command:

    make conformance PI=1.7.0          # = scripts/conformance.py --pi 1.7.0

1. installs ``@earendil-works/pi-coding-agent@VERSION`` into a scratch folder (``.pi-ref-VERSION/``,
   ignored by git; reused on later runs);
2. runs the oracle with that Pi on every recorded input, with the options stored in the recording
   itself (leaf or all leaves, keepRecentTokens, reserveTokens, context window);
3. compares the new output with the committed recording, field by field (the oracle's own
   ``oracle`` block, which names the Pi version, is left out), and prints the differences per
   golden case and a summary per field, leaf ids folded to ``*``.

Exit status: 0 when nothing differs, 1 when something does (or a run failed), 2 for a usage error.
``--json FILE`` writes every difference; ``--write`` replaces the committed recordings with the new
ones (for a reviewed move to a new Pi release: then update pitools until ``make test`` passes).
Needs node and npm (the registry) the first time a version is installed; the tests never need them.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import lzma
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
PACKAGE = "@earendil-works/pi-coding-agent"
RECORDING = re.compile(r"^(?:(?P<prefix>source|original|repaired)\.)?pi(?:\.krt\d+)?\.json\.xz$")
#: A leaf id as a byLeaf key or inside a field path: folded so the summary counts fields, not leaves.
LEAF_KEY = re.compile(r"^(byLeaf)\.[^.]+")
INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class Recording:
    """One committed oracle output and how to produce it again."""

    case: str
    path: Path  # golden/<case>/<name>.json.xz
    source: Path  # the session file the oracle read
    args: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.case}/{self.path.name}"


def load_blob(blob: bytes) -> Any:
    # Lone surrogates and deep nesting are legal in the oracle's output: json handles both.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    return json.loads(blob)


def oracle_args(options: dict[str, Any]) -> tuple[str, ...]:
    """The oracle's command-line flags that reproduce a recording's ``options``."""
    args: list[str] = []
    if options.get("allLeaves"):
        args.append("--all-leaves")
    leaf = options.get("leaf", "default")
    if not options.get("allLeaves") and leaf != "default":
        args += ["--leaf", "null" if leaf is None else str(leaf)]
    settings = options.get("compactionSettings") or {}
    if "keepRecentTokens" in settings:
        args += ["--keep-recent-tokens", str(settings["keepRecentTokens"])]
    if "reserveTokens" in settings:
        args += ["--reserve-tokens", str(settings["reserveTokens"])]
    if options.get("contextWindow") is not None:
        args += ["--context-window", str(options["contextWindow"])]
    if options.get("guard") is False:
        args.append("--no-guard")
    return tuple(args)


def fork_source(case: str) -> Path:
    """The session a golden fork/clone case was made from (its ``source.*`` recordings read it)."""
    sys.path.insert(0, str(ROOT))
    from tests.golden.fork_cases import CASES, source_path

    for spec in CASES:
        if spec.name == case:
            return Path(source_path(spec))
    raise LookupError(f"{case}: no fork case of that name in tests/golden/fork_cases.py")


def recordings(cases: list[str]) -> list[Recording]:
    found: list[Recording] = []
    folders = [GOLDEN / c for c in cases] if cases else sorted(p for p in GOLDEN.iterdir() if p.is_dir())
    for folder in folders:
        if not folder.is_dir():
            raise SystemExit(f"conformance: no golden case {folder.name!r}")
        for path in sorted(folder.glob("*.json.xz")):
            match = RECORDING.match(path.name)
            if match is None:
                continue
            recorded = load_blob(lzma.decompress(path.read_bytes()))
            options = recorded.get("options")
            if not isinstance(options, dict):
                # A crash or timeout recorded instead of output: nothing says how it was run.
                continue
            prefix = match.group("prefix")
            if prefix == "source":
                source = fork_source(folder.name)
            else:
                source = folder / (f"{prefix}.jsonl" if prefix else "session.jsonl")
            found.append(Recording(folder.name, path, source, oracle_args(options)))
    return found


def install(version: str) -> Path:
    """Pi ``version``'s package folder, installed with npm into ``.pi-ref-VERSION/`` when missing."""
    scratch = ROOT / f".pi-ref-{version}"
    package = scratch / "node_modules" / "@earendil-works" / "pi-coding-agent"
    if (package / "package.json").is_file():
        return package
    scratch.mkdir(exist_ok=True)
    (scratch / "package.json").write_text('{"name": "pi-ref", "private": true}\n')
    print(f"conformance: installing {PACKAGE}@{version} into {scratch.name}/", file=sys.stderr)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", f"{PACKAGE}@{version}"],
        cwd=scratch,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return package


def run_oracle(rec: Recording, oracle: Path, ref: Path, timeout: float) -> bytes:
    env = dict(os.environ, PI_REF_DIR=str(ref), TZ="UTC")
    cmd = ["node", "--max-old-space-size=3072", str(oracle), str(rec.source), *rec.args]
    try:
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return json.dumps({"error": "timeout"}).encode()
    if proc.returncode != 0:
        return json.dumps(
            {"error": "crash", "exitCode": proc.returncode, "stderrTail": proc.stderr.decode()[-2000:]}
        ).encode()
    return proc.stdout


def diff(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every place where two JSON values differ: ``(field path, committed, new)``."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in list(old) + [k for k in new if k not in old]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in new:
                out.append((sub, old[key], "<missing>"))
            elif key not in old:
                out.append((sub, "<missing>", new[key]))
            else:
                out.extend(diff(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            # Items compared pairwise up to the shorter length; the first 20 differences are enough to read.
            pairs = [d for i, (a, b) in enumerate(zip(old, new, strict=False)) for d in diff(a, b, f"{path}[{i}]")]
            return [(f"{path}.length", len(old), len(new)), *pairs[:20]]
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True)) for d in diff(a, b, f"{path}[{i}]")]
    if type(old) is not type(new) or old != new:
        return [(path, old, new)]
    return []


def field_pattern(path: str) -> str:
    return INDEX.sub("[]", LEAF_KEY.sub(r"\1.*", path))


def short(value: Any, limit: int = 100) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="conformance")
    parser.add_argument("--pi", required=True, metavar="VERSION", help="Pi release to compare with (e.g. 1.5.2)")
    parser.add_argument("cases", nargs="*", help="golden cases (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per oracle run")
    parser.add_argument("--show", type=int, default=5, help="differences printed per recording")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every difference as JSON")
    parser.add_argument("--write", action="store_true", help="replace the committed recordings with the new ones")
    opts = parser.parse_args(argv)
    if not re.fullmatch(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?", opts.pi):
        parser.error(f"--pi takes a version such as 1.6.0, not {opts.pi!r}")

    sys.path.insert(0, str(ROOT / "scripts"))
    from pi_reference import oracle_candidates, oracle_path

    oracle = oracle_path()
    if oracle is None:
        print(f"conformance: the oracle is not at {oracle_candidates()[0]} (set PI_ORACLE)", file=sys.stderr)
        return 2
    ref = install(opts.pi)
    todo = recordings(opts.cases)
    print(f"conformance: Pi {opts.pi} vs the committed recordings: {len(todo)} oracle runs", file=sys.stderr)

    report: dict[str, Any] = {"pi": opts.pi, "recordings": len(todo), "differing": {}, "failed": {}}
    fields: Counter[str] = Counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        fresh = pool.map(lambda r: run_oracle(r, oracle, ref, opts.timeout), todo)
        for rec, blob in zip(todo, fresh, strict=True):
            committed = load_blob(lzma.decompress(rec.path.read_bytes()))
            new = load_blob(blob)
            if isinstance(new, dict) and new.get("error") in ("crash", "timeout") and "options" not in new:
                report["failed"][rec.label] = new
                print(f"FAILED {rec.label}: {new.get('error')} {new.get('stderrTail', '')[-300:]}")
                continue
            committed.pop("oracle", None)
            new.pop("oracle", None)
            differences = diff(committed, new)
            if opts.write:
                rec.path.write_bytes(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))
            if not differences:
                continue
            report["differing"][rec.label] = [{"field": p, "committed": a, "new": b} for p, a, b in differences]
            patterns = {field_pattern(p) for p, _, _ in differences}
            fields.update(patterns)
            print(f"{rec.label}: {len(differences)} difference(s)")
            for p, a, b in differences[: opts.show]:
                print(f"  {p}: {short(a)} -> {short(b)}")
            if len(differences) > opts.show:
                print(f"  … {len(differences) - opts.show} more")

    same = len(todo) - len(report["differing"]) - len(report["failed"])
    print(
        f"\nPi {opts.pi}: {same} of {len(todo)} recordings identical, {len(report['differing'])} differ, "
        f"{len(report['failed'])} failed to run"
    )
    if fields:
        print("fields that differ (recordings affected):")
        for pattern, count in fields.most_common():
            print(f"  {count:4d}  {pattern}")
    if opts.json:
        # ASCII escapes: a recording may hold lone surrogates, which UTF-8 cannot encode.
        opts.json.write_text(json.dumps(report, indent=1) + "\n")
    return 1 if report["differing"] or report["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
