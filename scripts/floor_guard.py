#!/usr/bin/env python3
"""How far each command on each session shape is from the parse floor, and a guard against drift.

The floor is what no command can skip: reading the file and splitting it into lines. For every
shape ``scripts/gen_big.py`` makes (at ``--size`` MB, default 10), this measures in one process,
interleaved round by round, the CPU time (``time.process_time``, best of ``--reps``) of

* the floor: read the file, split it into lines;
* ``pitools context``, ``compact --dry-run``, ``inspect`` and ``branches``, each ``--format json``
  and human (at 100 columns), through :func:`pitools.cli.main` with the output in memory (imports warm, so start-up
  is left out: it is the same for every shape and ``make bench`` measures it on its own);

and prints each command's ratio to the floor. Ratios, not times: a busy or slower machine moves
both sides, so the ratio stays put where seconds do not.

``--record FILE`` writes the ratios as the baseline; ``--check FILE`` fails (exit 1) when a ratio
grew by more than ``--tolerance`` (default 20 %) over the baseline's, or a human view costs more
than 1.3 times the same command's JSON, naming each one; ``--attempts N`` measures again before
failing, and judges each ratio by its best over the attempts (a neighbour's burst passes, a
regression stays: it is slow in every attempt). ``make check`` runs ``--check
bench/floor-ratios.json --attempts 3`` after the tests, alone on the machine: run beside the test
suite's workers, memory-heavy commands (``inspect``) read up to 26 % slower against the floor.

Usage: scripts/floor_guard.py [--shapes compacted,never,...] [--size 10] [--reps 5] [--data DIR]
                              [--record FILE | --check FILE [--attempts N]] [--tolerance 0.2]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

SHAPES = ("compacted", "never", "branches", "tool-images", "images")
#: name -> pitools arguments after the file.
COMMANDS: dict[str, list[str]] = {
    "context json": ["context", "--format", "json"],
    "context human": ["context"],
    "compact json": ["compact", "--dry-run", "--no-config", "--format", "json"],
    "compact human": ["compact", "--dry-run", "--no-config"],
    "inspect json": ["inspect", "--format", "json"],
    "inspect human": ["inspect"],
    "branches json": ["branches", "--format", "json"],
    "branches human": ["branches"],
    # Exports (issue 39): no " human" pairing (markdown and html are compared with jsonl by
    # `make bench`, whole processes); here each is held to its own ratio to the floor.
    "export jsonl": ["export", "--format", "jsonl"],
    "export markdown": ["export", "--format", "markdown"],
    "export html": ["export", "--format", "html"],
}
#: Floor runs per round (each a few ms).
FLOOR_SAMPLES = 5
#: A human view may cost at most this much more than the same command's JSON (issue 39).
TARGET_HUMAN_RATIO = 1.3
DEFAULT_BASELINE = ROOT / "bench" / "floor-ratios.json"


def ensure_session(data: Path, shape: str, size: str) -> Path:
    import gen_big

    data.mkdir(parents=True, exist_ok=True)
    target = data / gen_big.file_name(size, shape)
    if not target.exists():
        gen = [sys.executable, str(Path(gen_big.__file__)), "--sizes", size, "--shape", shape, "--out", str(data)]
        subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
        # The file's pages go to disk now, not while the first round is timed (a fresh clone's
        # first attempt read the branches shape's inspect 52 % slow beside the write-back).
        os.sync()
    return target


def floor(path: Path) -> None:
    with open(path, "rb") as fh:
        fh.read().split(b"\n")


def command(args: list[str], path: Path) -> Callable[[], None]:
    from pitools.cli import main
    from pitools.cli.environment import Environment

    # No Pi configuration is read (an empty agent folder): the same work on every machine.
    environ = {"COLUMNS": "100", "NO_COLOR": "1", "HOME": "/nonexistent", "PI_CODING_AGENT_DIR": "/nonexistent"}

    def run() -> None:
        out = io.StringIO()
        env = Environment(stdout=out, stderr=io.StringIO(), environ=environ)
        status = main([args[0], str(path), *args[1:]], env)
        if status != 0:
            raise SystemExit(f"floor_guard: pitools {' '.join(args)} {path} exited {status}")

    return run


def cpu_best(fn: Callable[[], None], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def measure(shapes: list[str], size: str, reps: int, data: Path) -> dict[str, dict[str, float]]:
    """``{shape: {command: ratio to the floor}}``, plus each shape's floor in ms (``"floor ms"``)."""
    out: dict[str, dict[str, float]] = {}
    for shape in shapes:
        path = ensure_session(data, shape, size)
        runs = {name: command(args, path) for name, args in COMMANDS.items()}
        for fn in runs.values():  # warm: imports, caches, the page cache
            fn()
        floor(path)
        best_floor = float("inf")
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(reps):  # interleaved: a busy moment touches every case of the round
            # The floor is a few milliseconds: more samples of it, so its best is as steady as the
            # commands' (a floor read a tenth too fast moves every ratio of the shape a tenth up).
            best_floor = min(best_floor, cpu_best(lambda p=path: floor(p), FLOOR_SAMPLES))
            for name, fn in runs.items():
                best[name] = min(best[name], cpu_best(fn, 1))
        out[shape] = {name: round(t / best_floor, 2) for name, t in best.items()}
        out[shape]["floor ms"] = round(best_floor * 1000, 1)
    return out


Ratios = dict[str, dict[str, float]]


def compare(measured: Ratios, baseline: Ratios, tolerance: float) -> list[str]:
    """Every ratio that grew by more than ``tolerance`` over the baseline's, as one line each."""
    worse = []
    for shape, ratios in measured.items():
        for name, ratio in ratios.items():
            if name == "floor ms":
                continue
            base = baseline.get(shape, {}).get(name)
            if base is not None and ratio > base * (1 + tolerance):
                grew = f"+{ratio / base - 1:.0%}"
                worse.append(f"{shape} / {name}: {ratio:.2f}x the floor, baseline {base:.2f}x ({grew})")
    return worse


def human_over_json(measured: dict[str, dict[str, float]], target: float) -> list[str]:
    """Every human view that costs more than ``target`` times its JSON, as one line each."""
    over = []
    for shape, ratios in measured.items():
        for name in ratios:
            if name.endswith(" human"):
                json_name = name[: -len(" human")] + " json"
                if ratios[name] > ratios[json_name] * target:
                    times = ratios[name] / ratios[json_name]
                    over.append(f"{shape} / {name}: {times:.2f}x its JSON (target {target}x)")
    return over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--size", default="10", help="session size in MB (default 10)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--tolerance", type=float, default=0.2)
    parser.add_argument(
        "--attempts", type=int, default=1, help="with --check: measure again up to N times before failing"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", type=Path, help="write the ratios as the baseline")
    group.add_argument("--check", type=Path, help="fail when a ratio grew over the baseline's")
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    baseline = json.loads(args.check.read_text(encoding="utf-8"))["ratios"] if args.check else None
    kept: Ratios = {}
    for attempt in range(1, max(1, args.attempts) + 1):
        if attempt > 1:
            time.sleep(PAUSE_BETWEEN_ATTEMPTS)  # let a neighbour's burst pass
        measured = measure(shapes, args.size, args.reps, args.data)
        report(measured, args.size, args.reps)
        if baseline is None:
            break
        # Each ratio at its best over the attempts so far: a regression is slow in every attempt,
        # a busy moment only in some (with 55 ratios, one of them was slow in most whole attempts).
        kept = best_of(kept, measured)
        worse = compare(kept, baseline, args.tolerance) + human_over_json(kept, TARGET_HUMAN_RATIO)
        if not worse:
            within = f"every ratio within {args.tolerance:.0%} of {args.check}"
            print(f"{within}, every human view within {TARGET_HUMAN_RATIO}x")
            return 0
        print(f"attempt {attempt}: slower than the baseline by more than {args.tolerance:.0%}:", *worse, sep="\n  ")
    if args.record:
        doc = {"size_mb": int(args.size), "reps": args.reps, "ratios": measured}
        args.record.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"recorded {args.record}")
    return 1 if baseline is not None else 0


#: Seconds between two attempts of ``--check``.
PAUSE_BETWEEN_ATTEMPTS = 5.0


def best_of(kept: Ratios, measured: Ratios) -> Ratios:
    """Each ratio at the lower of its two values (the floor's milliseconds are reported as measured)."""
    out: Ratios = {}
    for shape, ratios in measured.items():
        before = kept.get(shape, {})
        out[shape] = {
            name: value if name == "floor ms" or name not in before else min(value, before[name])
            for name, value in ratios.items()
        }
    return out


def report(measured: Ratios, size: str, reps: int) -> None:
    width = max(len(n) for n in COMMANDS)
    print(f"CPU time / floor (read + split lines), best of {reps}, {size} MB sessions")
    print(f"{'shape':<12} {'floor':>8}  " + "  ".join(f"{n:>{width}}" for n in COMMANDS))
    for shape, ratios in measured.items():
        cells = "  ".join(f"{ratios[n]:>{width}.2f}" for n in COMMANDS)
        print(f"{shape:<12} {ratios['floor ms']:>6.1f}ms  {cells}")


if __name__ == "__main__":
    raise SystemExit(main())
