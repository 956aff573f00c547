#!/usr/bin/env python3
"""Benchmark pitools against Pi 1.6.0 doing the same work, on sessions of every shape (``make bench``).

Every measurement is a whole process (start-up included), stdout to /dev/null, run ``--reps``
times after one warm-up round, all cases of a session interleaved round by round, summarised by
the median of wall time and of CPU time (user + sys of the child, from ``os.wait4``; node's
includes its helper threads). Sessions (``scripts/gen_big.py``, generated once and cached in
``--data``, default ``bench/data``): the 100 MB shapes ``compacted`` (Pi auto-compacts),
``never`` (never compacted: the context is the whole branch), ``branches`` (hundreds of leaves),
``tool-images`` (base64 PNGs returned by reads), ``images`` (pasted and screenshotted images make
up most of the bytes), and the 1 GB ``compacted`` session.

Per session:

* ``pitools context --format json`` and ``pitools compact --dry-run --format json``;
* Pi, same work (``scripts/bench_pi.mjs context|compact``): exactly what pitools prints, built by
  Pi's own functions and written with ``JSON.stringify``; checked once per session against
  pitools' output (``context``: byte for byte; ``compact``: the preparation, parsed);
* Pi, load-only (``bench_pi.mjs load-context|load-compact``): the older, lighter baseline
  (``buildSessionContext``; ``prepareCompaction`` + serialized conversation);
* the HTML page: ``pitools export --format html -o OUT`` against Pi's ``pi --export FILE OUT``
  (``bench_pi.mjs export-html``: ``exportFromFile``), each writing its own self-contained page of
  the whole session to a file (not on the 1 GB session);
* a bare orjson parse of every line (``python -c``), the parse floor;
* ``pitools inspect`` and ``pitools validate -j 1`` for peak memory on the 1 GB session.

Noise: the machine is shared, so each case also reports the spread of its runs (min..max and
the coefficient of variation), ratios are also given as the median of per-round ratios (each
round runs every case back to back), and the 1-minute load average is sampled every round.

Usage: scripts/bench.py [--shapes compacted,never,branches,tool-images,images] [--big 1000] [--reps 5]
                        [--human-shapes compacted,never,branches] [--human-only] [--pitools CMD]
                        [--big-reps 3] [--data DIR] [--markdown FILE] [--from-json FILE]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
BENCH = ROOT / "bench"
DATA = BENCH / "data"
sys.path.insert(0, str(SCRIPTS))

TARGET_PI_RATIO = 0.5  # context / compact --dry-run JSON vs Pi doing the same work, every shape
TARGET_FLOOR_RATIO = 2.0  # context --format json vs a bare orjson parse, compacted shape
TARGET_RSS_RATIO = 3.0  # peak RSS vs file size, every command on the 1 GB session
TARGET_GROWTH = 11.0  # 1 GB time vs 100 MB time (same shape)
TARGET_HELP_MS = 150.0

SHAPES = ("compacted", "never", "branches", "tool-images", "images")

ORJSON_SNIPPET = (
    "import sys, orjson\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    for line in fh:\n"
    "        if line.strip():\n"
    "            try:\n"
    "                orjson.loads(line)\n"
    "            except orjson.JSONDecodeError:\n"
    "                pass\n"
)


@dataclass
class Sample:
    wall: float
    user: float
    sys: float
    maxrss: int  # bytes
    rc: int

    @property
    def cpu(self) -> float:
        return self.user + self.sys


@dataclass
class Case:
    name: str
    argv: list[str]
    env: dict[str, str] | None = None
    ok_codes: tuple[int, ...] = (0,)
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        walls = [s.wall for s in self.samples]
        cpus = [s.cpu for s in self.samples]

        def cv(xs: list[float]) -> float | None:
            return statistics.pstdev(xs) / statistics.mean(xs) if len(xs) > 1 and statistics.mean(xs) else None

        return {
            "medianSeconds": statistics.median(walls) if walls else None,
            "cpuSeconds": statistics.median(cpus) if cpus else None,
            "minSeconds": min(walls) if walls else None,
            "bestCpuSeconds": min(cpus) if cpus else None,
            "maxSeconds": max(walls) if walls else None,
            "wallCv": cv(walls),
            "cpuCv": cv(cpus),
            "peakRssBytes": max(s.maxrss for s in self.samples) if self.samples else None,
            "samples": [s.__dict__ for s in self.samples],
            "error": self.error,
        }

    def median(self) -> float | None:
        return statistics.median(s.wall for s in self.samples) if self.samples else None

    def peak_rss(self) -> int | None:
        return max(s.maxrss for s in self.samples) if self.samples else None


def run_once(argv: list[str], env: dict[str, str] | None = None, timeout: float = 1800.0) -> tuple[Sample, bytes]:
    """Run one process with stdout to /dev/null; wall time and rusage of that child only."""
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=devnull, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
        _pid, status, usage = os.wait4(proc.pid, 0) if timeout <= 0 else _wait(proc, start + timeout)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-2000:]
    return Sample(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024, proc.returncode), tail


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> tuple[int, int, Any]:
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return pid, status, usage
        if time.perf_counter() > deadline:
            proc.kill()
            return os.wait4(proc.pid, 0)
        time.sleep(0.002)


def capture(argv: list[str], env: dict[str, str] | None) -> bytes:
    """stdout of one run, for the same-work check."""
    return subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, check=True).stdout


def pitools_argv() -> list[str]:
    script = Path(sys.executable).with_name("pitools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pitools"]


def pi_reference() -> tuple[Path | None, str | None]:
    """Pi's package folder (PI_REF_DIR or .pi-ref/, installed with npm if needed), or why not."""
    if shutil.which("node") is None:
        return None, "node not found"
    try:
        from record_golden import reference_dir  # the same lookup/install as `make golden`

        ref = reference_dir()
    except (Exception, SystemExit) as exc:  # npm missing or offline
        return None, f"Pi reference unavailable ({exc})"
    if not (ref / "dist" / "core" / "session-manager.js").is_file():
        return None, f"Pi reference not found at {ref}"
    return ref, None


def ensure_session(data: Path, shape: str, size: str) -> Path:
    import gen_big

    data.mkdir(parents=True, exist_ok=True)
    target = data / gen_big.file_name(size, shape)
    if not target.exists():
        # In a child process: generating in this one would grow it by ~100 MB, and Linux counts a
        # forked child's pre-exec pages in its ru_maxrss, so every later run's peak RSS would read high.
        gen = [sys.executable, str(Path(gen_big.__file__)), "--sizes", size, "--shape", shape, "--out", str(data)]
        subprocess.run(gen, check=True)
    return target


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def fmt_s(x: float | None) -> str:
    return "—" if x is None else (f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s")


def fmt_mb(x: int | None) -> str:
    return "—" if x is None else (f"{x / 1e6:.0f} MB" if x < 1e9 else f"{x / 1e9:.2f} GB")


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def fmt_r(x: float | None, target: float | None = None) -> str:
    if x is None:
        return "—"
    mark = "" if target is None else (" ✓" if x <= target else " ✗")
    return f"{x:.2f}×{mark}"


def same_work_check(pit: list[str], f: str, env: dict[str, str], node_env: dict[str, str]) -> dict[str, Any]:
    """Compare pitools' JSON with what the Pi side builds: context byte for byte, compact's
    preparation and token estimate parsed."""
    bench_pi = str(SCRIPTS / "bench_pi.mjs")
    out: dict[str, Any] = {}
    mine = capture([*pit, "context", f, "--format", "json"], env)
    theirs = capture(["node", bench_pi, "context", f], node_env)
    out["context"] = "identical bytes" if mine == theirs else _first_difference(mine, theirs)
    del mine, theirs
    mine_c = json.loads(capture([*pit, "compact", f, "--dry-run", "--format", "json", "--no-config"], env))
    theirs_c = json.loads(capture(["node", bench_pi, "compact", f], node_env))
    prep_m, prep_t = mine_c.get("preparation"), theirs_c.get("preparation")
    if prep_m is not None and prep_t is not None:
        prep_m = {k: v for k, v in prep_m.items() if k != "previousSummary" or v is not None}
    same = prep_m == prep_t and mine_c["shouldCompact"]["tokens"] == theirs_c["tokens"]
    same = same and mine_c["shouldCompact"]["result"] == theirs_c["shouldCompact"]
    out["compact"] = "same preparation, token estimate and decision" if same else "DIFFERENT"
    return out


def _first_difference(a: bytes, b: bytes) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"DIFFERENT at byte {n}: {a[n - 40 : n + 40]!r} vs {b[n - 40 : n + 40]!r}"


def run_cases(cases: list[Case], reps: int, label: str) -> list[float | None]:
    """One warm-up round, then ``reps`` rounds of every case back to back; the load averages seen."""
    loads: list[float | None] = []
    for rep in range(reps + 1):
        loads.append(load_average())
        for case in cases:
            if case.error:
                continue
            sample, tail = run_once(case.argv, case.env)
            if sample.rc not in case.ok_codes:
                case.error = f"exit {sample.rc}: {tail.decode('utf-8', 'replace').strip()[-300:]}"
                continue
            if rep > 0:
                case.samples.append(sample)
        print(f"bench: {label} round {rep}/{reps} done (load {loads[-1]})", file=sys.stderr)
    return loads


def paired_ratio(a: Case, b: Case, key: str) -> float | None:
    """Median over rounds of a/b (both ran in the same round, back to back)."""
    pairs = [(getattr(x, key), getattr(y, key)) for x, y in zip(a.samples, b.samples, strict=False) if getattr(y, key)]
    return statistics.median(x / y for x, y in pairs) if pairs else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--shapes", default=",".join(SHAPES), help="100 MB session shapes to run")
    p.add_argument("--size", default="100", help="size (MB) of the shape sessions")
    p.add_argument("--big", default="1000", help="size (MB) of the big compacted session (0: skip)")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--big-reps", type=int, default=3)
    p.add_argument("--data", type=Path, default=DATA, help="where generated sessions are cached")
    p.add_argument("--no-pi", action="store_true", help="skip Pi (node) runs")
    p.add_argument("--no-check", action="store_true", help="skip the same-work output comparison")
    p.add_argument("--no-human", action="store_true", help="skip human views vs JSON (issue 13)")
    p.add_argument(
        "--human-shapes",
        default="compacted",
        help="100 MB shapes to run the human-vs-JSON section on (comma-separated)",
    )
    p.add_argument("--human-only", action="store_true", help="run only the human-vs-JSON section (no JSON/Pi section)")
    p.add_argument(
        "--pitools", default=None, help="command that runs pitools (default: this venv's), e.g. a saved baseline"
    )
    p.add_argument("--markdown", type=Path, default=None, help="also write the Markdown table to this file")
    p.add_argument("--json", type=Path, default=BENCH / "results.json")
    p.add_argument("--from-json", type=Path, default=None, help="only re-render the table of a results file")
    p.add_argument("--check-only", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.check_only:
        env = dict(os.environ, PITOOLS_DEBUG="0", TZ="UTC", PI_CODING_AGENT_DIR=str(BENCH / "no-agent-dir"))
        print(json.dumps(same_work_check(pitools_argv(), args.check_only, env, env)))
        return 0
    if args.from_json:
        table = markdown(json.loads(args.from_json.read_text()))
        print(table)
        if args.markdown:
            args.markdown.write_text(table)
        return 0

    # Byte-compile pitools as `pip install` does for a regular install; an editable install
    # under PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "pitools")], check=False)
    pit = shlex.split(args.pitools) if args.pitools else pitools_argv()
    notes: list[str] = []
    env = dict(os.environ, PITOOLS_DEBUG="0", TZ="UTC", PI_CODING_AGENT_DIR=str(BENCH / "no-agent-dir"))
    ref, why = (None, "--no-pi") if args.no_pi else pi_reference()
    node_env = dict(env, PI_REF_DIR=str(ref)) if ref is not None else None
    if node_env is None:
        notes.append(f"Pi columns skipped: {why}")

    sessions = [] if args.human_only else [(shape, args.size) for shape in args.shapes.split(",") if shape]
    if args.big and args.big != "0" and not args.human_only:
        sessions.append(("compacted", args.big))
    results: dict[str, Any] = {"sessions": [], "notes": notes}
    bench_pi = str(SCRIPTS / "bench_pi.mjs")
    scratch = tempfile.mkdtemp(prefix="pitools-bench-")  # the HTML pages pitools writes
    for shape, size in sessions:
        path = ensure_session(args.data, shape, size)
        f = str(path)
        big = size == args.big and size != args.size
        cases = [
            Case("pitools context", [*pit, "context", f, "--format", "json"], env),
            Case("pitools compact", [*pit, "compact", f, "--dry-run", "--format", "json", "--no-config"], env),
        ]
        if not big:  # Pi's page of a 1 GB session would need tens of GB of memory
            page = str(Path(scratch) / f"{shape}-{size}.html")
            cases.append(
                Case("pitools export-html", [*pit, "export", f, "--format", "html", "-o", page, "--force"], env)
            )
        if node_env is not None:
            cases += [
                Case("pi context", ["node", bench_pi, "context", f], node_env),
                Case("pi compact", ["node", bench_pi, "compact", f], node_env),
                Case("pi load-context", ["node", bench_pi, "load-context", f], node_env),
                Case("pi load-compact", ["node", bench_pi, "load-compact", f], node_env),
            ]
            if not big:
                cases.append(Case("pi export-html", ["node", bench_pi, "export-html", f], node_env))
        cases.append(Case("orjson parse", [sys.executable, "-c", ORJSON_SNIPPET, f], env))
        if big:
            cases.append(Case("pitools inspect", [*pit, "inspect", f, "--format", "json"], env))
            cases.append(Case("pitools validate -j1", [*pit, "validate", "-j", "1", f], env, ok_codes=(0, 1)))
        check = None
        if node_env is not None and not args.no_check and not big:
            # In a child process: the outputs compared are big, and every process forked later
            # would start with (and report as its peak RSS) the memory this one had grown to.
            proc = subprocess.run(
                [sys.executable, __file__, "--check-only", f], env=node_env, capture_output=True, text=True
            )
            check = json.loads(proc.stdout) if proc.returncode == 0 else {"context": proc.stderr[-300:], "compact": "?"}
            print(f"bench: {shape} {size} MB same-work check: {check}", file=sys.stderr)
        loads = run_cases(cases, args.big_reps if big else args.reps, f"{shape} {size} MB")
        by_name = {c.name: c for c in cases}
        paired: dict[str, Any] = {}
        for mine, theirs in (
            ("pitools context", "pi context"),
            ("pitools compact", "pi compact"),
            ("pitools export-html", "pi export-html"),
            ("pitools context", "pi load-context"),
            ("pitools compact", "pi load-compact"),
            ("pitools context", "orjson parse"),
        ):
            if mine in by_name and theirs in by_name:
                paired[f"{mine} / {theirs}"] = {
                    "wall": paired_ratio(by_name[mine], by_name[theirs], "wall"),
                    "cpu": paired_ratio(by_name[mine], by_name[theirs], "cpu"),
                }
        results["sessions"].append(
            {
                "shape": shape,
                "sizeMb": size,
                "file": f,
                "bytes": path.stat().st_size,
                "lines": _count_lines(path),
                "check": check,
                "loadAverages": loads,
                "cases": {c.name: c.summary() for c in cases},
                "paired": paired,
            }
        )
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")  # partial results survive a stop

    if not args.no_human:
        results["humanViews"] = []
        for shape in (s for s in args.human_shapes.split(",") if s):
            human_file = ensure_session(args.data, shape, args.size)
            print(f"bench: human views on {human_file.name}", file=sys.stderr)
            section = bench_human_views(pit, human_file, env, args.reps)
            section["shape"] = shape
            results["humanViews"].append(section)
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(results, indent=2) + "\n")

    shutil.rmtree(scratch, ignore_errors=True)
    helps = [run_once([*pit, "--help"], env)[0] for _ in range(10)]
    results["help"] = {
        "medianSeconds": statistics.median(s.wall for s in helps),
        "cpuSeconds": statistics.median(s.cpu for s in helps),
    }
    results["machine"] = {
        "python": platform.python_version(),
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("node")
        else None,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "reps": args.reps,
        "bigReps": args.big_reps,
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
    }
    table = markdown(results)
    results["markdown"] = table
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    return 0


def _count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            n += chunk.count(b"\n")
    return n


#: The commands timed against Pi doing the same work, as the tables name them.
COMMAND_NAMES = {
    "context": "context --format json",
    "compact": "compact --dry-run --format json",
    # Pi: `pi --export FILE OUT.html`; each writes its own self-contained page of the whole session.
    "export-html": "export --format html -o OUT",
}


def markdown(results: dict[str, Any]) -> str:
    out: list[str] = []
    out.append(
        "| session | command | pitools wall | pitools CPU | Pi same work wall / CPU | ratio wall | ratio CPU "
        "| Pi load-only wall / CPU | ratio wall / CPU | peak RSS / file |"
    )
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    sessions = results["sessions"]
    for sess in sessions:
        cases = sess["cases"]
        nbytes = sess["bytes"]
        label = f"{sess['shape']} {fmt_mb(nbytes)}"

        def get(name: str, key: str, c: dict[str, Any] = cases) -> Any:
            return c.get(name, {}).get(key)

        for cmd in ("context", "compact", "export-html"):
            mine, same, light = f"pitools {cmd}", f"pi {cmd}", f"pi load-{cmd}"
            if get(mine, "medianSeconds") is None:
                continue
            m, mc = get(mine, "medianSeconds"), get(mine, "cpuSeconds")
            o, oc = get(same, "medianSeconds"), get(same, "cpuSeconds")
            lo, loc = get(light, "medianSeconds"), get(light, "cpuSeconds")
            rss = get(mine, "peakRssBytes")
            name = COMMAND_NAMES[cmd]
            out.append(
                f"| {label} | {name} | {fmt_s(m)} | {fmt_s(mc)} | {fmt_s(o)} / {fmt_s(oc)} | "
                f"{fmt_r(ratio(m, o), TARGET_PI_RATIO)} | {fmt_r(ratio(mc, oc), TARGET_PI_RATIO)} | "
                f"{fmt_s(lo)} / {fmt_s(loc)} | {fmt_r(ratio(m, lo))} / {fmt_r(ratio(mc, loc))} | "
                f"{fmt_r(ratio(rss, nbytes), TARGET_RSS_RATIO)} |"
            )
    out.append("")
    out.append("Best of the rounds against Pi doing the same work (wall / CPU; the fastest run of each side):")
    out.append("")
    out.append("| session | command | pitools best | Pi best | ratio (wall / CPU) |")
    out.append("| --- | --- | ---: | ---: | ---: |")
    for sess in sessions:
        for cmd in COMMAND_NAMES:
            mine, same = sess["cases"].get(f"pitools {cmd}", {}), sess["cases"].get(f"pi {cmd}", {})
            if mine.get("minSeconds") is None or same.get("minSeconds") is None:
                continue
            bw, bc = mine["minSeconds"], mine.get("bestCpuSeconds")
            ow, oc = same["minSeconds"], same.get("bestCpuSeconds")
            label = f"{sess['shape']} {fmt_mb(sess['bytes'])}"
            out.append(
                f"| {label} | {cmd} | {fmt_s(bw)} / {fmt_s(bc)} | {fmt_s(ow)} / {fmt_s(oc)} | "
                f"{fmt_r(ratio(bw, ow), TARGET_PI_RATIO)} / {fmt_r(ratio(bc, oc), TARGET_PI_RATIO)} |"
            )
    out.append("")
    out.append("Parse floor (a bare orjson parse of every line) and peak memory of Pi:")
    out.append("")
    out.append(
        "| session | orjson parse wall / CPU | context ÷ parse (wall / CPU) | Pi context peak RSS | "
        "Pi compact peak RSS | load average (min–max) |"
    )
    out.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for sess in sessions:
        cases = sess["cases"]
        nbytes = sess["bytes"]
        fl = cases.get("orjson parse", {})
        ctx = cases.get("pitools context", {})
        target = TARGET_FLOOR_RATIO if sess["shape"] == "compacted" else None
        loads = [x for x in sess.get("loadAverages", []) if x is not None]
        out.append(
            f"| {sess['shape']} {fmt_mb(nbytes)} | {fmt_s(fl.get('medianSeconds'))} / {fmt_s(fl.get('cpuSeconds'))} | "
            f"{fmt_r(ratio(ctx.get('medianSeconds'), fl.get('medianSeconds')), target)} / "
            f"{fmt_r(ratio(ctx.get('cpuSeconds'), fl.get('cpuSeconds')), target)} | "
            f"{fmt_r(ratio(cases.get('pi context', {}).get('peakRssBytes'), nbytes))} | "
            f"{fmt_r(ratio(cases.get('pi compact', {}).get('peakRssBytes'), nbytes))} | "
            f"{(f'{min(loads):.1f}–{max(loads):.1f}' if loads else '—')} |"
        )
    # Noise: spread of every case's runs.
    out.append("")
    out.append("Noise (per case: wall min–max, coefficient of variation of wall / CPU over the runs):")
    out.append("")
    out.append("| session | case | wall min–max | CV wall | CV CPU |")
    out.append("| --- | --- | ---: | ---: | ---: |")
    for sess in sessions:
        for name, c in sess["cases"].items():
            if c.get("medianSeconds") is None:
                continue
            cvw, cvc = c.get("wallCv"), c.get("cpuCv")
            spread = f"{fmt_s(c['minSeconds'])}–{fmt_s(c['maxSeconds'])}"
            out.append(
                f"| {sess['shape']} {fmt_mb(sess['bytes'])} | {name} | {spread} | "
                f"{'—' if cvw is None else f'{cvw:.0%}'} | {'—' if cvc is None else f'{cvc:.0%}'} |"
            )
    out.append("")
    out.append("Paired ratios (median over rounds of the ratio within a round):")
    out.append("")
    out.append("| session | pair | wall | CPU |")
    out.append("| --- | --- | ---: | ---: |")
    for sess in sessions:
        for pair, r in sess.get("paired", {}).items():
            out.append(f"| {sess['shape']} {fmt_mb(sess['bytes'])} | {pair} | {fmt_r(r['wall'])} | {fmt_r(r['cpu'])} |")
    # Growth and memory on the big session.
    small = next((s for s in sessions if s["shape"] == "compacted" and s["sizeMb"] != sessions[-1]["sizeMb"]), None)
    bigs = sessions[-1] if sessions and small is not None and sessions[-1]["shape"] == "compacted" else None
    if small is not None and bigs is not None:
        scale = bigs["bytes"] / small["bytes"]
        out.append("")
        out.append(
            f"Growth {fmt_mb(small['bytes'])} → {fmt_mb(bigs['bytes'])} (compacted shape; {scale:.1f}× the bytes; "
            f"target ≤ {TARGET_GROWTH:.0f}×):"
        )
        out.append("")
        out.append("| command | wall growth | CPU growth |")
        out.append("| --- | ---: | ---: |")
        for name, c in bigs["cases"].items():
            a = small["cases"].get(name, {})
            tgt = TARGET_GROWTH if name.startswith("pitools") else None
            out.append(
                f"| {name} | {fmt_r(ratio(c.get('medianSeconds'), a.get('medianSeconds')), tgt)} | "
                f"{fmt_r(ratio(c.get('cpuSeconds'), a.get('cpuSeconds')), tgt)} |"
            )
        out.append("")
        out.append(f"Peak memory on the {fmt_mb(bigs['bytes'])} session (target ≤ {TARGET_RSS_RATIO:.0f}× the file):")
        out.append("")
        out.append("| command | peak RSS | RSS / file |")
        out.append("| --- | ---: | ---: |")
        for name, c in bigs["cases"].items():
            rss = c.get("peakRssBytes")
            tgt = TARGET_RSS_RATIO if name.startswith("pitools") else None
            out.append(f"| {name} | {fmt_mb(rss)} | {fmt_r(ratio(rss, bigs['bytes']), tgt)} |")
    checks = [(s, s.get("check")) for s in sessions if s.get("check")]
    if checks:
        out.append("")
        out.append("Same work, checked once per session (pitools' JSON vs what the Pi side builds):")
        out.append("")
        for sess, chk in checks:
            out.append(f"- {sess['shape']} {fmt_mb(sess['bytes'])}: context {chk['context']}; compact {chk['compact']}")
    out.append("")
    h = results.get("help")
    if h:
        mark = " ✓" if h["medianSeconds"] * 1000 < TARGET_HELP_MS else " ✗"
        out.append(
            f"`pitools --help`: {fmt_s(h['medianSeconds'])} wall, {fmt_s(h['cpuSeconds'])} CPU "
            f"(target < {TARGET_HELP_MS:.0f} ms{mark})"
        )
    for sess in sessions:
        for name, c in sess["cases"].items():
            if c.get("error"):
                out.append("")
                out.append(f"Note: {name} on {sess['shape']} {fmt_mb(sess['bytes'])} failed: {c['error']}")
    for n in results.get("notes", []):
        out.append("")
        out.append(f"Note: {n}")
    human = results.get("humanViews")
    for section in [human] if isinstance(human, dict) else human or []:  # a dict: older results files
        out.append("")
        out.append(human_markdown(section).rstrip())
    m = results.get("machine")
    if m:
        out.append("")
        out.append(
            f"Medians of {m['reps']} runs ({m['bigReps']} on the big session) after one warm-up round, whole "
            "processes, interleaved, stdout to /dev/null; CPU = user + sys of the process (node's includes its "
            f"helper threads); Python {m['python']}, node {m['node']}, {m['cpus']} CPUs, {m['date']}, "
            f"commit {m.get('commit', '?')}."
        )
    return "\n".join(out) + "\n"


# -- human views against their JSON counterparts (issue 13) ------------------------------------

#: (name, human argv, JSON argv); "{f}" is the session file. Human output goes to /dev/null
#: (not a terminal: no width limit), as in `pitools tree F > out.txt`. `validate` runs with one
#: process both ways and exits 1 when it finds problems. `ls` has no single-file form: not here.
HUMAN_PAIRS: list[tuple[str, list[str], list[str]]] = [
    (
        "compact --dry-run",
        ["compact", "{f}", "--dry-run", "--no-config"],
        ["compact", "{f}", "--dry-run", "--no-config", "--format", "json"],
    ),
    ("tree", ["tree", "{f}"], ["tree", "{f}", "--format", "json"]),
    ("branches", ["branches", "{f}"], ["branches", "{f}", "--format", "json"]),
    ("context", ["context", "{f}"], ["context", "{f}", "--format", "json"]),
    ("inspect", ["inspect", "{f}"], ["inspect", "{f}", "--format", "json"]),
    ("validate", ["validate", "-j", "1", "{f}"], ["validate", "-j", "1", "{f}", "--format", "json"]),
    ("export markdown", ["export", "{f}"], ["export", "{f}", "--format", "jsonl"]),
    ("export html", ["export", "{f}", "--format", "html"], ["export", "{f}", "--format", "jsonl"]),
]
#: Targets: every human view within 1.3x its JSON counterpart; export's peak memory at most 3x the file.
TARGET_HUMAN_RATIO = 1.3
TARGET_EXPORT_MEMORY = 3.0


def bench_human_views(pit: list[str], file: Path, env: dict[str, str], reps: int) -> dict[str, Any]:
    """Wall and CPU medians, paired ratios and peak RSS of each human view and its JSON form on ``file``.

    Each human view runs right after its JSON counterpart, round after round, so the paired
    ratios (median over rounds of human/JSON within a round) see the same machine load.
    """
    cases: list[tuple[str, Case, Case]] = []
    for name, human, as_json in HUMAN_PAIRS:
        h = Case(f"{name} (human)", [*pit, *(a.replace("{f}", str(file)) for a in human)], env, ok_codes=(0, 1))
        j = Case(f"{name} (json)", [*pit, *(a.replace("{f}", str(file)) for a in as_json)], env, ok_codes=(0, 1))
        cases.append((name, h, j))
    for rep in range(reps + 1):  # one warm-up round, then interleaved repetitions
        for _, h, j in cases:
            for case in (j, h):
                if case.error:
                    continue
                sample, tail = run_once(case.argv, case.env)
                if sample.rc not in case.ok_codes:
                    case.error = f"exit {sample.rc}: {tail.decode('utf-8', 'replace').strip()[-300:]}"
                elif rep > 0:
                    case.samples.append(sample)
        print(f"bench: human views on {file.name} round {rep}/{reps} done (load {load_average()})", file=sys.stderr)
    nbytes = file.stat().st_size
    out: dict[str, Any] = {"file": str(file), "bytes": nbytes, "views": {}}
    for name, h, j in cases:
        hs, js = h.summary(), j.summary()
        out["views"][name] = {
            "humanSeconds": hs["medianSeconds"],
            "jsonSeconds": js["medianSeconds"],
            "humanCpuSeconds": hs["cpuSeconds"],
            "jsonCpuSeconds": js["cpuSeconds"],
            "ratio": ratio(hs["medianSeconds"], js["medianSeconds"]),
            "cpuRatio": ratio(hs["cpuSeconds"], js["cpuSeconds"]),
            "pairedWallRatio": paired_ratio(h, j, "wall"),
            "pairedCpuRatio": paired_ratio(h, j, "cpu"),
            "humanPeakRssBytes": h.peak_rss(),
            "jsonPeakRssBytes": j.peak_rss(),
            "memoryPerFileByte": (h.peak_rss() or 0) / nbytes if nbytes else None,
            "error": h.error or j.error,
        }
    return out


def human_markdown(section: dict[str, Any]) -> str:
    """The human-vs-JSON table for bench/RESULTS.md."""
    shape = section.get("shape", "compacted")
    lines = [
        f"Human views vs JSON, {shape} {section['bytes'] / 1e6:.0f} MB "
        f"(target: human ≤ {TARGET_HUMAN_RATIO}× JSON; export peak RSS ≤ {TARGET_EXPORT_MEMORY:g}× the file)",
        "",
        "| view | human wall / CPU | JSON wall / CPU | human / JSON wall | human / JSON CPU "
        "| paired wall / CPU | human peak RSS | RSS / file |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, v in section["views"].items():
        if v["error"]:
            lines.append(f"| {name} | failed: {v['error'][:60]} | | | | | | |")
            continue
        memory_target = TARGET_EXPORT_MEMORY if name.startswith("export") else None
        per_byte = v["memoryPerFileByte"]
        lines.append(
            f"| {name} | {fmt_s(v['humanSeconds'])} / {fmt_s(v.get('humanCpuSeconds'))} "
            f"| {fmt_s(v['jsonSeconds'])} / {fmt_s(v.get('jsonCpuSeconds'))} "
            f"| {fmt_r(v['ratio'], TARGET_HUMAN_RATIO)} | {fmt_r(v.get('cpuRatio'), TARGET_HUMAN_RATIO)} "
            f"| {fmt_r(v.get('pairedWallRatio'))} / {fmt_r(v.get('pairedCpuRatio'))} "
            f"| {fmt_mb(v['humanPeakRssBytes'])} "
            f"| {fmt_r(per_byte, memory_target) if per_byte is not None else '—'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
