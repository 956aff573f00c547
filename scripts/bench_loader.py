#!/usr/bin/env python3
"""Before/after benchmark of the commands that load a session, two pitools installs interleaved.

For issue 23 (one loader with a keep policy): runs each command on the generated 100 MB
sessions (``scripts/gen_big.py`` shapes) with a baseline install (``--before``, e.g. main's
venv) and this one (``--after``), alternating A/B every round from a neutral folder (so
``python -m pitools`` cannot import a checkout by accident), and reports per command the
median CPU time (user + sys of the child), the peak RSS and the median of the per-round CPU
ratios (after / before). The first round also compares the two outputs byte for byte.

Usage: scripts/bench_loader.py --before /work/main/.venv/bin/pitools [--after .venv/bin/pitools]
                               [--data bench/data] [--shapes compacted,never,branches] [--reps 5]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

from bench import Sample, _wait, ensure_session  # noqa: E402

#: Where the commands run: no checkout, so ``python -m pitools`` could not pick one up.
NEUTRAL = "/"


def run_once(argv: list[str], env: dict[str, str]) -> Sample:
    """One process, stdout to /dev/null: wall time and rusage of that child only."""
    import time

    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=devnull, stderr=devnull, stdin=subprocess.DEVNULL, env=env, cwd=NEUTRAL)
        _pid, status, usage = _wait(proc, start + 1800)
        wall = time.perf_counter() - start
    return Sample(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))


COMMANDS: dict[str, list[str]] = {
    "context json": ["context", "{f}", "--format", "json"],
    "context human": ["context", "{f}"],
    "compact --dry-run json": ["compact", "{f}", "--dry-run", "--format", "json", "--no-config"],
    "compact --dry-run human": ["compact", "{f}", "--dry-run", "--no-config"],
    "branches json": ["branches", "{f}", "--format", "json"],
    "tree json": ["tree", "{f}", "--format", "json"],
    "slim --dry-run": ["slim", "{f}", "--images", "--thinking", "--tool-output", "20000", "--dry-run"],
    "validate -j 1": ["validate", "{f}", "-j", "1"],
}


def _digest(argv: list[str], env: dict[str, str]) -> str:
    """Exit code and hash of stdout, read in pieces: holding a big output here would raise this
    process's peak RSS, which Linux reports for every child forked afterwards."""
    h = hashlib.sha256()
    proc = subprocess.Popen(argv, env=env, cwd=NEUTRAL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    while chunk := proc.stdout.read(1 << 16):
        h.update(chunk)
    return f"{proc.wait()}:{h.hexdigest()[:16]}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="the baseline pitools executable")
    p.add_argument("--after", default=str(Path(sys.executable).with_name("pitools")))
    p.add_argument("--data", type=Path, default=SCRIPTS.parent / "bench" / "data")
    p.add_argument("--shapes", default="compacted,never,branches")
    p.add_argument("--commands", default=",".join(COMMANDS))
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PITOOLS_")}
    env.update(NO_COLOR="1", COLUMNS="120", PI_CODING_AGENT_DIR="/nonexistent-pi-agent-dir")
    installs = {"before": args.before, "after": args.after}
    print("| shape | command | CPU before | CPU after | CPU ratio (rounds) | peak RSS before | after | same output |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        f = str(ensure_session(args.data, shape, "100"))
        for name in args.commands.split(","):
            cmd = [x.replace("{f}", f) for x in COMMANDS[name]]
            same = _digest([installs["before"], *cmd], env) == _digest([installs["after"], *cmd], env)
            cpu: dict[str, list[float]] = {"before": [], "after": []}
            rss: dict[str, list[int]] = {"before": [], "after": []}
            ratios: list[float] = []
            for r in range(args.reps):
                order = ("before", "after") if r % 2 == 0 else ("after", "before")
                got = {}
                for which in order:
                    sample = run_once([installs[which], *cmd], env)
                    got[which] = sample
                    cpu[which].append(sample.cpu)
                    rss[which].append(sample.maxrss)
                ratios.append(got["after"].cpu / got["before"].cpu)
            b_cpu, a_cpu = statistics.median(cpu["before"]), statistics.median(cpu["after"])
            spread = f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})"
            print(
                f"| {shape} | {name} | {b_cpu:.2f} s | {a_cpu:.2f} s | {spread}"
                f" | {max(rss['before']) / 1e6:.0f} MB | {max(rss['after']) / 1e6:.0f} MB"
                f" | {'yes' if same else 'NO'} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
