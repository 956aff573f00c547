#!/usr/bin/env python3
"""Benchmark ``pitools dataset`` on a large generated archive: throughput (MB/s) and peak memory.

The archive (deterministic, generated once into ``bench/out/dataset-archive``): one big session
of ``--big-mb`` MB plus sessions of 10 MB up to ``--size-mb`` in total, spread over a few project
folders, with a clone of every tenth session (real fork history for the ``copied`` flags). Each
run is one ``pitools dataset`` process (start-up included); peak memory is its max RSS
(``os.wait4`` rusage: the largest single process, the command or one of its workers), and its
CPU time (user + system, workers included) is reported beside the wall time, since on a shared
machine the wall time mostly measures the neighbours. Measured: a full build
(Parquet), the same as JSONL, an incremental re-run with nothing changed, and one after a turn is
appended to one session.

Usage: scripts/bench_dataset.py [--size-mb 1000] [--big-mb 300] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT / "scripts"))


def pitools() -> list[str]:
    exe = ROOT / ".venv" / "bin" / "pitools"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pitools"]


def run(argv: list[str]) -> dict[str, Any]:
    """One child process: wall seconds, peak RSS (bytes), exit code and stderr's last line."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return {
        "seconds": wall,
        "cpuSeconds": usage.ru_utime + usage.ru_stime,
        "maxRssBytes": usage.ru_maxrss * 1024,
        "exit": os.waitstatus_to_exitcode(status),
        "stderr": err.decode("utf-8", "replace").strip().splitlines()[-1:],
    }


def make_archive(folder: Path, size_mb: int, big_mb: int) -> int:
    """Generate the archive once; returns its size in bytes."""
    import gen_big

    stamp = folder / ".complete"
    if stamp.exists() and stamp.read_text() == f"{size_mb},{big_mb}":
        return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))
    shutil.rmtree(folder, ignore_errors=True)
    projects = [folder / f"--home-dev-proj{i}--" for i in range(4)]
    for p in projects:
        p.mkdir(parents=True)
    (projects[0] / "big.jsonl").write_bytes(gen_big.generate(big_mb, 11))
    total = big_mb * 1_000_000
    i = 0
    while total < size_mb * 1_000_000:
        data = gen_big.generate(10, 100 + i)
        target = projects[i % len(projects)] / f"s{i:04d}.jsonl"
        target.write_bytes(data)
        total += len(data)
        if i % 10 == 0:
            subprocess.run(
                [*pitools(), "clone", str(target), "-o", str(target.with_name(f"s{i:04d}-clone.jsonl"))],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        i += 1
    stamp.write_text(f"{size_mb},{big_mb}")
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1000)
    ap.add_argument("--big-mb", type=int, default=300)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    archive = OUT / "dataset-archive"
    if args.generate_only:
        make_archive(archive, args.size_mb, args.big_mb)
        return 0
    # Generate in a child: a child's peak RSS on Linux starts from its parent's at fork, so this
    # process must stay small for the measurements below to be the dataset runs' own.
    subprocess.run(
        [sys.executable, __file__, "--generate-only", "--size-mb", str(args.size_mb), "--big-mb", str(args.big_mb)],
        check=True,
    )
    size = sum(p.stat().st_size for p in archive.rglob("*.jsonl"))
    mb = size / 1e6
    results: dict[str, Any] = {"archiveBytes": size, "files": len(list(archive.rglob("*.jsonl")))}
    for fmt in ("parquet", "jsonl"):
        out = OUT / f"dataset-{fmt}"
        shutil.rmtree(out, ignore_errors=True)
        results[f"full-{fmt}"] = run([*pitools(), "dataset", str(archive), "-o", str(out), "--format", fmt])
    out = OUT / "dataset-parquet-j2"
    shutil.rmtree(out, ignore_errors=True)
    results["full-parquet -j 2"] = run([*pitools(), "dataset", str(archive), "-o", str(out), "-j", "2"])
    out = OUT / "dataset-parquet"
    results["incremental-unchanged"] = run([*pitools(), "dataset", str(archive), "-o", str(out)])
    victim = next(iter(sorted(archive.rglob("s0001.jsonl"))))
    original = victim.read_bytes()
    try:
        last = json.loads(original.rstrip(b"\n").rsplit(b"\n", 1)[-1])
        line = {
            "type": "message",
            "id": "benchapp",
            "parentId": last["id"],
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "one more", "timestamp": 1767225600000},
        }
        victim.write_bytes(original + json.dumps(line).encode() + b"\n")
        results["incremental-one-changed"] = run([*pitools(), "dataset", str(archive), "-o", str(out)])
    finally:
        victim.write_bytes(original)
    outputs = {
        fmt: sum(p.stat().st_size for p in (OUT / f"dataset-{fmt}").rglob("*") if p.is_file())
        for fmt in ("parquet", "jsonl")
    }
    results["outputBytes"] = outputs
    rows = [
        "| run | wall s | MB/s (wall) | CPU s | MB/s (CPU) | peak RSS | RSS / biggest file |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ("full-parquet", "full-parquet -j 2", "full-jsonl", "incremental-unchanged", "incremental-one-changed"):
        r = results[name]
        rows.append(
            f"| {name} | {r['seconds']:.1f} | {mb / r['seconds']:.1f} | {r['cpuSeconds']:.1f} "
            f"| {mb / r['cpuSeconds']:.1f} | {r['maxRssBytes'] / 1e6:,.0f} MB "
            f"| {r['maxRssBytes'] / (args.big_mb * 1e6):.2f}x |"
        )
    table = "\n".join(
        [
            f"`pitools dataset` on a generated archive of {mb:,.0f} MB in {results['files']} session files "
            f"(biggest {args.big_mb} MB); Parquet output {outputs['parquet'] / 1e6:,.0f} MB, "
            f"JSONL {outputs['jsonl'] / 1e6:,.0f} MB.",
            "",
            *rows,
        ]
    )
    print(table)
    (OUT / "dataset-bench.json").write_text(json.dumps(results, indent=2))
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return (
        0
        if all(results[k]["exit"] == 0 for k in results if isinstance(results[k], dict) and "exit" in results[k])
        else 1
    )


if __name__ == "__main__":
    raise SystemExit(main())
