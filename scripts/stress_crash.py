#!/usr/bin/env python3
"""Kill pitools' writers with SIGKILL at random moments and check the session file is never torn.

Writers: ``pitools migrate --in-place``, ``pitools repair --in-place`` and ``pitools slim
--in-place`` (temp file + fsync + rename; ``--writer repair|slim|all``) and
``pitools compact --apply --model builtin`` (one fsynced append). For each trial a fresh copy of
the session is written, the writer starts, and after a random delay (spread over the whole run,
with extra weight on its end, where the writing happens) it gets SIGKILL. Then the file must be:

* migrate, repair, slim: the original bytes, or exactly the bytes of an uninterrupted run;
* compact: the original bytes, or the original plus exactly one complete line that parses as a
  ``compaction`` entry whose parent is the old leaf.

Anything else is a violation (the file is saved for inspection). Leftovers are counted too: temp
files (``.*.pitools-tmp``, expected right after a SIGKILL; the next write to the file removes
them) and backups, including backups shorter than the original (killed while copying).

Usage: scripts/stress_crash.py [--trials 1000] [--writer migrate|compact|both] [--size-mb 1]
                               [--seed 1] [--no-backup] [--json FILE]
Exit status: 0 when no trial left a torn file, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def pitools_argv() -> list[str]:
    script = Path(sys.executable).with_name("pitools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pitools"]


def v3_session(size_mb: float, seed: int) -> bytes:
    import gen_big

    return gen_big.generate(size_mb, seed)


def v1_session(size_mb: float, seed: int) -> bytes:
    """The same kind of session in format v1: no version, no ids, no parent links."""
    out = []
    for line in v3_session(size_mb, seed).splitlines():
        value = json.loads(line)
        if value.get("type") == "session":
            value.pop("version", None)
        else:
            value.pop("id", None)
            value.pop("parentId", None)
            if value.get("type") in ("label", "context_edit", "branch_summary"):
                continue  # v1 had none of these
            if value.get("type") == "compaction":
                value.pop("firstKeptEntryId", None)
                value["firstKeptEntryIndex"] = 1
        out.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    return b"".join(out)


@dataclass
class Writer:
    name: str
    original: bytes
    args: list[str]
    expected: bytes | None = None  # migrate: the exact result
    leaf: str | None = None  # compact: the parent of the appended entry
    exact: bool = False  # the result is one exact file (migrate, repair, slim): learnt at calibration
    durations: list[float] = field(default_factory=list)

    def check(self, data: bytes) -> str:
        """'original', 'complete', or a description of the violation."""
        if data == self.original:
            return "original"
        if self.expected is not None:
            return "complete" if data == self.expected else "torn: neither the original nor the migrated file"
        if not data.startswith(self.original):
            return "torn: the original bytes changed"
        tail = data[len(self.original) :]
        newlines = tail.count(b"\n")
        if not tail.endswith(b"\n") or newlines != 1:
            return f"torn: {newlines} newline(s) in {len(tail)} appended bytes"
        try:
            entry = json.loads(tail)
        except ValueError:
            return "torn: the appended line is not JSON"
        if entry.get("type") != "compaction" or entry.get("parentId") != self.leaf:
            return "torn: the appended line is not a compaction of the leaf"
        return "complete"


def build_writers(size_mb: float, seed: int, no_backup: bool, which: str) -> list[Writer]:
    extra = ["--no-backup"] if no_backup else []
    writers = []
    if which in ("migrate", "both", "all"):
        original = v1_session(size_mb, seed)
        writers.append(Writer("migrate --in-place", original, ["migrate", "{file}", "--in-place", *extra], exact=True))
    if which in ("repair", "all"):
        # A torn write fused into the next line, plus CRLF endings: several fixes in one rewrite.
        lines = v3_session(size_mb, seed + 2).splitlines(keepends=True)
        k = len(lines) // 2
        lines[k] = lines[k][: len(lines[k]) // 2] + lines.pop(k + 1)
        damaged = b"".join(line.rstrip(b"\n") + b"\r\n" for line in lines)
        args = ["repair", "{file}", "--in-place", "--reattach", *extra]
        writers.append(Writer("repair --in-place", damaged, args, exact=True))
    if which in ("slim", "all"):
        # About 1 MB: Pi's first auto-compaction comes at ~700 KB of text, leaving content to slim.
        original = v3_session(max(size_mb, 1.2), seed + 3)
        args = ["slim", "{file}", "--in-place", "--thinking", "--tool-output", "1000", *extra]
        writers.append(Writer("slim --in-place", original, args, exact=True))
    if which in ("compact", "both", "all"):
        original = v3_session(size_mb, seed + 1)
        last = json.loads(original.splitlines()[-1])
        args = [
            "compact",
            "{file}",
            "--apply",
            "--model",
            "builtin",
            "--keep-recent-tokens",
            "2000",
            "--no-config",
            "--format",
            "json",
            *extra,
        ]
        writers.append(Writer("compact --apply --model builtin", original, args, leaf=last["id"]))
    return writers


def run(writer: Writer, folder: Path, delay: float | None, env: dict[str, str]) -> tuple[str, bool, float]:
    """One trial in a fresh folder: returns (outcome, killed, seconds)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    target = folder / "session.jsonl"
    target.write_bytes(writer.original)
    argv = [*pitools_argv(), *(a.replace("{file}", str(target)) for a in writer.args)]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    killed = False
    if delay is not None:
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            killed = True
    _out, err = proc.communicate(timeout=300)
    elapsed = time.perf_counter() - start
    outcome = writer.check(target.read_bytes())
    if not killed and proc.returncode != 0:
        # Not a kill: the writer itself failed (a bug, or a refused write). Counted separately.
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        outcome = f"{outcome}; writer failed (exit {proc.returncode}: {last[0][:200]})"
    return outcome, killed, elapsed


def leftovers(folder: Path, original: bytes) -> Counter[str]:
    found: Counter[str] = Counter()
    for p in folder.iterdir():
        if p.name.endswith(".pitools-tmp"):
            found["temp file"] += 1
        elif ".bak-" in p.name:
            size = p.stat().st_size
            found["backup" if size == len(original) else "partial backup"] += 1
    return found


def stress(writer: Writer, trials: int, rng: random.Random, work: Path, env: dict[str, str]) -> dict[str, Any]:
    # Calibrate: uninterrupted runs give the duration and (migrate) the expected result.
    for _ in range(3):
        folder = work / "calibrate"
        if writer.exact and writer.expected is None:
            writer.expected = b""  # placeholder so check() does not run the compact rules
            outcome, _k, seconds = run(writer, folder, None, env)
            writer.expected = (folder / "session.jsonl").read_bytes()
        else:
            outcome, _k, seconds = run(writer, folder, None, env)
            assert outcome == "complete", f"an uninterrupted {writer.name} did not complete: {outcome}"
        writer.durations.append(seconds)
    typical = statistics.median(writer.durations)
    outcomes: Counter[str] = Counter()
    left: Counter[str] = Counter()
    violations: list[dict[str, Any]] = []
    failures: Counter[str] = Counter()
    killed_count = 0
    for i in range(trials):
        # Half the kills anywhere in the run, half in its last 40 % (where the file is written).
        delay = rng.uniform(0, typical * 1.05) if i % 2 == 0 else rng.uniform(typical * 0.6, typical * 1.05)
        folder = work / f"trial-{i}"
        outcome, killed, seconds = run(writer, folder, delay, env)
        killed_count += killed
        if not killed:
            # The machine got faster (or less loaded) than at calibration: follow it, so the
            # kills keep landing inside the run.
            writer.durations.append(seconds)
            typical = statistics.median(writer.durations[-15:])
        key = "VIOLATION" if outcome.startswith("torn") else outcome.split(";")[0]
        outcomes[f"{key} ({'killed' if killed else 'finished'})"] += 1
        if "writer failed" in outcome:
            failures[outcome.split("; ", 1)[1]] += 1
        left += leftovers(folder, writer.original)
        if key == "VIOLATION":
            keep = work / f"violation-{i}.jsonl"
            shutil.copyfile(folder / "session.jsonl", keep)
            violations.append({"trial": i, "delay": delay, "detail": outcome, "file": str(keep)})
        shutil.rmtree(folder, ignore_errors=True)
        if (i + 1) % 100 == 0:
            print(f"stress_crash: {writer.name}: {i + 1}/{trials} trials", file=sys.stderr)
    return {
        "writer": writer.name,
        "trials": trials,
        "killed": killed_count,
        "typicalSeconds": typical,
        "fileBytes": len(writer.original),
        "outcomes": dict(outcomes),
        "leftovers": dict(left),
        "writerFailures": dict(failures),
        "violations": violations,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=1000, help="trials per writer (default 1000)")
    p.add_argument("--writer", choices=["migrate", "compact", "repair", "slim", "both", "all"], default="both")
    p.add_argument("--size-mb", type=float, default=1.0, help="session size (default 1 MB)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-backup", action="store_true", help="run the writers with --no-backup")
    p.add_argument("--json", type=Path, default=None, help="also write the summary here")
    p.add_argument("--work", type=Path, default=None, help="working folder (default: a temp folder)")
    args = p.parse_args(argv)

    rng = random.Random(args.seed)
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(Path(tempfile.gettempdir()) / "pitools-stress-no-agent"))
    env.pop("PITOOLS_DEBUG", None)
    work = args.work or Path(tempfile.mkdtemp(prefix="pitools-stress-"))
    work.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    summary = {"seed": args.seed, "sizeMb": args.size_mb, "noBackup": args.no_backup, "results": results}
    for w in build_writers(args.size_mb, args.seed, args.no_backup, args.writer):
        results.append(stress(w, args.trials, rng, work, env))
        if args.json:  # after each writer, so a long run that is stopped still reports
            args.json.write_text(json.dumps(summary, indent=2) + "\n")
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    bad = sum(len(r["violations"]) for r in results)
    if bad:
        print(f"stress_crash: {bad} torn file(s); kept in {work}", file=sys.stderr)
        return 1
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
