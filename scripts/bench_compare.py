#!/usr/bin/env python3
"""This tree's pitools against an earlier revision's, in the same run (``make bench-compare BASE=rev``).

A refactoring is meant to leave speed alone; this shows whether it did. The earlier revision is
checked out once into ``bench/base/<sha>`` (a detached git worktree) and run from this venv with
``PYTHONPATH`` pointing at it, so both sides use the same interpreter and dependencies and start
the same way (``python -m pitools``). Every command runs on the generated 100 MB sessions of
``scripts/bench.py`` (``scripts/gen_big.py``), base and current back to back in each round, after
one warm-up round; the figures are medians over the rounds, and each ratio is the median of the
per-round ratios current/base (so a load spike hits both sides of a pair alike). CPU time (user +
sys of the child) is the figure to trust on a shared machine; peak RSS is the maximum over rounds.

Usage: scripts/bench_compare.py --base REV [--shapes compacted,never,branches] [--reps 5]
                                [--data DIR] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench  # noqa: E402  (scripts/ is not a package: the one place runs are timed and summarised)

#: Read-only commands both revisions have; ``{f}`` is the session file.
COMMANDS: tuple[tuple[str, tuple[str, ...], tuple[int, ...]], ...] = (
    ("context --format json", ("context", "{f}", "--format", "json"), (0,)),
    ("compact --dry-run --format json", ("compact", "{f}", "--dry-run", "--format", "json", "--no-config"), (0,)),
    ("inspect --format json", ("inspect", "{f}", "--format", "json"), (0,)),
    ("validate -j 1", ("validate", "-j", "1", "{f}"), (0, 1)),
    ("validate -j 2", ("validate", "-j", "2", "{f}"), (0, 1)),
    ("branches --format json", ("branches", "{f}", "--format", "json"), (0,)),
    ("tree", ("tree", "{f}"), (0,)),
)


def base_checkout(rev: str) -> Path:
    """``bench/base/<sha>``: a detached worktree of ``rev``, byte-compiled as an install would be."""
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    target = ROOT / "bench" / "base" / sha[:12]
    if not (target / "pitools" / "__init__.py").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(target), sha], cwd=ROOT, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(target / "pitools")], check=False)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--base", required=True, help="the earlier revision (a commit, tag or branch)")
    p.add_argument("--shapes", default="compacted,never,branches", help="100 MB session shapes (comma-separated)")
    p.add_argument("--size", default="100", help="size (MB) of the sessions")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--data", type=Path, default=bench.DATA, help="where generated sessions are cached")
    p.add_argument("--markdown", type=Path, default=None, help="also write the table to this file")
    args = p.parse_args(argv)

    base = base_checkout(args.base)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "pitools")], check=False)
    common = dict(os.environ, PITOOLS_DEBUG="0", TZ="UTC", PI_CODING_AGENT_DIR=str(bench.BENCH / "no-agent-dir"))
    common.pop("PYTHONDONTWRITEBYTECODE", None)
    sides = {"base": dict(common, PYTHONPATH=str(base)), "current": dict(common, PYTHONPATH=str(ROOT))}
    # -P: the working directory (this checkout) must not come before PYTHONPATH on sys.path
    run = [sys.executable, "-P", "-m", "pitools"]

    rows: list[str] = []
    loads: list[float | None] = []
    pairs: list[tuple[str, str, bench.Case, bench.Case]] = [
        (
            "—",
            "--help",
            bench.Case("base --help", [*run, "--help"], sides["base"]),
            bench.Case("current --help", [*run, "--help"], sides["current"]),
        )
    ]
    loads += bench.run_cases([c for _, _, b, n in pairs for c in (b, n)], args.reps * 4, "--help")
    for shape in [s for s in args.shapes.split(",") if s]:
        f = str(bench.ensure_session(args.data, shape, args.size))
        mine: list[tuple[str, str, bench.Case, bench.Case]] = []
        for label, template, ok in COMMANDS:
            argv_ = [*run, *(a.replace("{f}", f) for a in template)]
            mine.append(
                (
                    f"{shape} {args.size} MB",
                    label,
                    bench.Case(f"base {label}", argv_, sides["base"], ok_codes=ok),
                    bench.Case(f"current {label}", argv_, sides["current"], ok_codes=ok),
                )
            )
        loads += bench.run_cases([c for _, _, b, n in mine for c in (b, n)], args.reps, f"{shape}")
        pairs += mine

    rows.append(f"pitools now against {args.base} ({base.name}), same run, {args.reps} rounds after a warm-up")
    seen = [x for x in loads if x is not None]
    if seen:
        rows.append(f"(1-minute load average {min(seen):.1f}–{max(seen):.1f} during the runs)")
    rows += [
        "",
        "| session | command | base CPU | current CPU | CPU ratio | wall ratio | base / current peak RSS |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for session, label, b, n in pairs:
        if b.error or n.error:
            rows.append(f"| {session} | {label} | {b.error or ''} | {n.error or ''} | | | |")
            continue
        cpu_b = bench.statistics.median(s.cpu for s in b.samples)
        cpu_n = bench.statistics.median(s.cpu for s in n.samples)
        rows.append(
            f"| {session} | {label} | {bench.fmt_s(cpu_b)} | {bench.fmt_s(cpu_n)} | "
            f"{bench.fmt_r(bench.paired_ratio(n, b, 'cpu'))} | {bench.fmt_r(bench.paired_ratio(n, b, 'wall'))} | "
            f"{bench.fmt_mb(b.peak_rss())} / {bench.fmt_mb(n.peak_rss())} |"
        )
    table = "\n".join(rows) + "\n"
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
