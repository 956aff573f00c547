#!/usr/bin/env python3
"""Benchmark pitools against Pi 1.6.0 and a bare orjson parse (``make bench``).

Every measurement is a whole process (start-up included), run ``--reps`` times, interleaved, and
summarised by the median. Per size (1, 10 and 100 MB sessions from ``scripts/gen_big.py``):

* ``pitools inspect``, ``pitools validate``, ``pitools context --format json`` and
  ``pitools compact --dry-run --format json`` (stdout to /dev/null);
* Pi 1.6.0 doing the same work in node (``scripts/bench_pi.mjs context|compact``: load + migrate
  through ``SessionManager.open`` on a temp copy, then ``buildSessionContext`` + ``JSON.stringify``,
  or ``prepareCompaction(getBranch())``);
* a bare orjson parse of every line (``python -c``), the floor for ``validate``.

Peak memory is the child's max RSS (``os.wait4`` rusage). Also measured: ``pitools --help`` and
``pitools validate DIR`` over 1,000 sessions (wall time, CPU time and cores used). Results go to
``bench/results.json``; the table is printed as Markdown (``--markdown FILE`` writes it too).

Pi is found through ``PI_REF_DIR`` or installed into ``.pi-ref/`` with npm, exactly as
``scripts/record_golden.py`` does; without node or npm the Pi columns are left empty.

Usage: scripts/bench.py [--sizes 1,10,100] [--reps 5] [--profile] [--markdown bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
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

TARGET_PI_RATIO = 0.7  # context and compact --dry-run on the biggest file, vs Pi in node
TARGET_ORJSON_RATIO = 2.0  # validate vs a bare orjson parse
TARGET_RSS_RATIO = 3.0  # peak RSS vs file size
TARGET_HELP_MS = 150.0

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

# The compaction planner without the CLI: used only when `pitools compact` cannot run yet.
CORE_PLAN_SNIPPET = (
    "import sys\n"
    "from pitools.core.session.api import load\n"
    "from pitools.core.compaction.prepare import CompactionSettings\n"
    "from pitools.core.js.jsonout import dumps, jsonable\n"
    "from pitools.core.compaction.plan import plan_compaction\n"
    "loaded = load(sys.argv[1])\n"
    "leaf = loaded.leaf(None)\n"
    "plan = plan_compaction(loaded, leaf, CompactionSettings(), context_window=200000)\n"
    "sys.stdout.buffer.write(dumps(jsonable(plan.to_json())) + b'\\n')\n"
)


@dataclass
class Sample:
    wall: float
    user: float
    sys: float
    maxrss: int  # bytes
    rc: int


@dataclass
class Case:
    name: str
    argv: list[str]
    env: dict[str, str] | None = None
    ok_codes: tuple[int, ...] = (0,)
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None

    def median(self) -> float | None:
        return statistics.median(s.wall for s in self.samples) if self.samples else None

    def peak_rss(self) -> int | None:
        return max(s.maxrss for s in self.samples) if self.samples else None

    def cpu(self) -> float | None:
        return statistics.median(s.user + s.sys for s in self.samples) if self.samples else None


def run_once(argv: list[str], env: dict[str, str] | None = None, timeout: float = 900.0) -> tuple[Sample, bytes]:
    """Run one process with stdout to /dev/null; wall time and rusage of that child only."""
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=devnull, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-2000:]
    return Sample(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024, proc.returncode), tail


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


def ensure_data(sizes: list[str]) -> dict[str, Path]:
    import gen_big

    DATA.mkdir(parents=True, exist_ok=True)
    missing = [s for s in sizes if not (DATA / f"big-{s}mb.jsonl").exists()]
    if missing:
        gen_big.main(["--sizes", ",".join(missing), "--out", str(DATA)])
    return {s: DATA / f"big-{s}mb.jsonl" for s in sizes}


def ensure_dir_corpus(count: int) -> Path:
    """``count`` sessions (golden files, valid and broken, cycled) in one folder for validate DIR."""
    folder = DATA / f"dir{count}"
    if folder.is_dir() and len(list(folder.glob("*.jsonl"))) == count:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    sources = sorted((ROOT / "golden").glob("*/session.jsonl"))
    for i in range(count):
        src = sources[i % len(sources)]
        shutil.copyfile(src, folder / f"s{i:04d}-{src.parent.name}.jsonl")
    return folder


def probe(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    sample, tail = run_once(argv, env, timeout=600)
    return sample.rc, tail.decode("utf-8", "replace").strip().splitlines()[-1:][0] if tail.strip() else ""


def fmt_s(x: float | None) -> str:
    return "—" if x is None else (f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s")


def fmt_mb(x: int | None) -> str:
    return "—" if x is None else f"{x / 1e6:.0f} MB"


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def fmt_r(x: float | None, target: float | None = None) -> str:
    if x is None:
        return "—"
    mark = "" if target is None else (" ✓" if x <= target else " ✗")
    return f"{x:.2f}×{mark}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1,10,100")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--dir-count", type=int, default=1000, help="sessions in the validate DIR run (0: skip)")
    p.add_argument("--no-pi", action="store_true", help="skip Pi (node) runs")
    p.add_argument("--profile", action="store_true", help="also profile each pitools command on the biggest file")
    p.add_argument("--markdown", type=Path, default=None, help="also write the Markdown table to this file")
    p.add_argument("--json", type=Path, default=BENCH / "results.json")
    p.add_argument("--from-json", type=Path, default=None, help="only re-render the table of a results file")
    args = p.parse_args(argv)
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        table = markdown(saved, list(saved["sizes"]))
        print(table)
        if args.markdown:
            args.markdown.write_text(table)
        return 0

    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    files = ensure_data(sizes)
    # Byte-compile pitools as `pip install` does for a regular install; an editable install
    # under PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "pitools")], check=False)
    pit = pitools_argv()
    notes: list[str] = []
    env = dict(os.environ, PITOOLS_DEBUG="0", TZ="UTC", PI_CODING_AGENT_DIR=str(BENCH / "no-agent-dir"))

    ref, why = (None, "--no-pi") if args.no_pi else pi_reference()
    node_env = None
    if ref is not None:
        node_env = dict(env, PI_REF_DIR=str(ref))
    else:
        notes.append(f"Pi columns skipped: {why}")

    # Which pitools commands can run today (validate and compact's settings are being written).
    smallest = files[sizes[0]]
    have_validate = probe([*pit, "validate", "--help"], env)[0] == 0
    if not have_validate:
        notes.append("`pitools validate` is not available yet: skipped")
    compact_argv = [*pit, "compact", "{file}", "--dry-run", "--format", "json", "--no-config"]
    rc, last = probe([a.replace("{file}", str(smallest)) for a in compact_argv], env)
    core_plan = False
    if rc != 0:
        notes.append(
            f"`pitools compact --dry-run` failed (exit {rc}: {last}); timed the core planner "
            "(load + plan_compaction + JSON) in its place"
        )
        core_plan = True

    results: dict[str, Any] = {"sizes": {}, "notes": notes}
    for size in sizes:
        f = str(files[size])
        cases = [
            Case("pitools inspect", [*pit, "inspect", f, "--format", "json"], env),
            Case("pitools context", [*pit, "context", f, "--format", "json"], env),
        ]
        if have_validate:
            # The default uses both cores for a big file; -j 1 is the single-process cost.
            cases.append(Case("pitools validate", [*pit, "validate", f], env, ok_codes=(0, 1)))
            cases.append(Case("pitools validate -j1", [*pit, "validate", "-j", "1", f], env, ok_codes=(0, 1)))
        if core_plan:
            cases.append(Case("pitools compact", [sys.executable, "-c", CORE_PLAN_SNIPPET, f], env))
        else:
            cases.append(Case("pitools compact", [a.replace("{file}", f) for a in compact_argv], env))
        if node_env is not None:
            bench_pi = str(SCRIPTS / "bench_pi.mjs")
            cases.append(Case("pi context", ["node", bench_pi, "context", f], node_env))
            cases.append(Case("pi compact", ["node", bench_pi, "compact", f], node_env))
        cases.append(Case("orjson parse", [sys.executable, "-c", ORJSON_SNIPPET, f], env))
        # One warm-up round (page cache, .pyc), then interleaved repetitions.
        for rep in range(args.reps + 1):
            for case in cases:
                if case.error:
                    continue
                sample, tail = run_once(case.argv, case.env)
                if sample.rc not in case.ok_codes:
                    case.error = f"exit {sample.rc}: {tail.decode('utf-8', 'replace').strip()[-300:]}"
                    notes.append(f"{case.name} on {size} MB failed: {case.error}")
                    continue
                if rep > 0:
                    case.samples.append(sample)
            print(f"bench: {size} MB round {rep}/{args.reps} done", file=sys.stderr)
        results["sizes"][size] = {
            "file": f,
            "bytes": files[size].stat().st_size,
            "cases": {
                c.name: {
                    "medianSeconds": c.median(),
                    "cpuSeconds": c.cpu(),
                    "peakRssBytes": c.peak_rss(),
                    "samples": [s.__dict__ for s in c.samples],
                    "error": c.error,
                }
                for c in cases
            },
        }

    # pitools --help (start-up cost).
    helps = [run_once([*pit, "--help"], env)[0] for _ in range(max(10, args.reps))]
    results["help"] = {
        "medianSeconds": statistics.median(s.wall for s in helps),
        "cpuSeconds": statistics.median(s.user + s.sys for s in helps),
        "target": TARGET_HELP_MS / 1000,
    }

    if args.dir_count and have_validate:
        folder = ensure_dir_corpus(args.dir_count)
        results["validateDir"] = {}
        for label, extra in (("default", []), ("-j 1", ["-j", "1"])):
            runs = []
            for _ in range(max(1, min(args.reps, 3))):
                sample, tail = run_once([*pit, "validate", *extra, str(folder)], env)
                if sample.rc not in (0, 1):
                    notes.append(f"validate DIR failed: exit {sample.rc}: {tail.decode('utf-8', 'replace')[-300:]}")
                    break
                runs.append(sample)
            if runs:
                wall = statistics.median(s.wall for s in runs)
                cpu = statistics.median(s.user + s.sys for s in runs)
                results["validateDir"][label] = {
                    "sessions": args.dir_count,
                    "bytes": sum(x.stat().st_size for x in folder.glob("*.jsonl")),
                    "medianSeconds": wall,
                    "cpuSeconds": cpu,
                    "coresUsed": cpu / wall if wall else None,
                    "peakRssBytes": max(s.maxrss for s in runs),
                    "cpuCount": os.cpu_count(),
                }

    if args.profile:
        results["profiles"] = profile(pit, files[sizes[-1]], env, core_plan)

    results["humanViews"] = bench_human_views(pit, files[sizes[-1]], env, args.reps)

    results["machine"] = {
        "python": platform.python_version(),
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("node")
        else None,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d"),
        "reps": args.reps,
    }
    table = markdown(results, sizes) + "\n" + human_markdown(results["humanViews"])
    results["markdown"] = table
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    return 0


def markdown(results: dict[str, Any], sizes: list[str]) -> str:
    out: list[str] = []
    big = sizes[-1]
    out.append(
        "| size | command | pitools wall | pitools CPU | baseline | baseline wall | baseline CPU "
        "| ratio (wall) | ratio (CPU) | peak RSS | RSS / file |"
    )
    out.append("| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size in sizes:
        info = results["sizes"][size]
        cases = info["cases"]
        nbytes = info["bytes"]

        def get(name: str, key: str, c: dict[str, Any] = cases) -> Any:
            return c.get(name, {}).get(key)

        rows = [
            ("inspect", "pitools inspect", None, None),
            ("validate", "pitools validate", "orjson parse", TARGET_ORJSON_RATIO),
            ("validate -j 1", "pitools validate -j1", "orjson parse", None),
            ("context --format json", "pitools context", "pi context", TARGET_PI_RATIO),
            ("compact --dry-run --format json", "pitools compact", "pi compact", TARGET_PI_RATIO),
        ]
        for label, mine, theirs, target in rows:
            if mine not in cases or get(mine, "medianSeconds") is None:
                continue
            m, mc = get(mine, "medianSeconds"), get(mine, "cpuSeconds")
            o = get(theirs, "medianSeconds") if theirs else None
            oc = get(theirs, "cpuSeconds") if theirs else None
            base = "—" if theirs is None else ("bare orjson" if theirs == "orjson parse" else "Pi 1.6.0 (node)")
            tgt = target if size == big else None
            rr = get(mine, "peakRssBytes")
            rss_target = TARGET_RSS_RATIO if size == big else None
            out.append(
                f"| {nbytes / 1e6:.0f} MB | {label} | {fmt_s(m)} | {fmt_s(mc)} | {base} | "
                f"{fmt_s(o)} | {fmt_s(oc)} | "
                f"{fmt_r(ratio(m, o), tgt)} | {fmt_r(ratio(mc, oc), tgt)} | {fmt_mb(rr)} | "
                f"{fmt_r(ratio(rr, nbytes), rss_target)} |"
            )
        for name in ("pi context", "pi compact", "orjson parse"):
            if get(name, "medianSeconds") is not None:
                out.append(
                    f"| {nbytes / 1e6:.0f} MB | ({name}) | | | | {fmt_s(get(name, 'medianSeconds'))} | "
                    f"{fmt_s(get(name, 'cpuSeconds'))} | | | {fmt_mb(get(name, 'peakRssBytes'))} | "
                    f"{fmt_r(ratio(get(name, 'peakRssBytes'), nbytes))} |"
                )
    if len(sizes) >= 2:
        a, b = sizes[-2], sizes[-1]
        out.append("")
        out.append(f"Time growth {a} MB → {b} MB (linear = {float(b) / float(a):.0f}×):")
        out.append("")
        out.append("| command | wall growth | CPU growth |")
        out.append("| --- | ---: | ---: |")
        ca, cb = results["sizes"][a]["cases"], results["sizes"][b]["cases"]
        for name in cb:
            rw = ratio(cb[name].get("medianSeconds"), ca.get(name, {}).get("medianSeconds"))
            rc = ratio(cb[name].get("cpuSeconds"), ca.get(name, {}).get("cpuSeconds"))
            out.append(f"| {name} | {fmt_r(rw)} | {fmt_r(rc)} |")
    out.append("")
    h = results["help"]["medianSeconds"]
    hc = results["help"].get("cpuSeconds")
    mark = " ✓" if h * 1000 < TARGET_HELP_MS else " ✗"
    out.append(f"`pitools --help`: {fmt_s(h)} wall, {fmt_s(hc)} CPU (target < {TARGET_HELP_MS:.0f} ms{mark})")
    dirs = results.get("validateDir") or {}
    if "sessions" in dirs:  # a results file from before -j existed
        dirs = {"default": dirs}
    for label, vd in dirs.items():
        out.append("")
        out.append(
            f"`pitools validate DIR` ({label}) over {vd['sessions']:,} sessions ({vd['bytes'] / 1e6:.0f} MB): "
            f"{fmt_s(vd['medianSeconds'])} wall, {fmt_s(vd['cpuSeconds'])} CPU, "
            f"{vd['coresUsed']:.2f} of {vd['cpuCount']} cores used, peak RSS {fmt_mb(vd['peakRssBytes'])}"
        )
    for n in results["notes"]:
        out.append("")
        out.append(f"Note: {n}")
    m = results["machine"]
    out.append("")
    out.append(
        f"Median of {m['reps']} runs after one warm-up, whole processes, stdout to /dev/null; "
        "CPU = user + sys "
        f"of the process (node's includes its helper threads); Python {m['python']}, node {m['node']}, "
        f"{m['cpus']} CPUs, {m['date']}."
    )
    return "\n".join(out) + "\n"


def profile(pit: list[str], file: Path, env: dict[str, str], core_plan: bool) -> dict[str, str]:
    """pyinstrument text profiles of each pitools command (bench/profiles/), if pyinstrument is installed."""
    out: dict[str, str] = {}
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        return {"error": "pyinstrument is not installed (pip install pyinstrument into the venv)"}
    folder = BENCH / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    commands = {
        "inspect": ["inspect", str(file), "--format", "json"],
        "validate": ["validate", str(file)],
        "context": ["context", str(file), "--format", "json"],
        "compact": ["compact", str(file), "--dry-run", "--format", "json", "--no-config"],
    }
    for name, cmd in commands.items():
        target = folder / f"{name}.txt"
        if name == "compact" and core_plan:
            argv = [
                sys.executable,
                "-m",
                "pyinstrument",
                "-o",
                str(target),
                "-c",
                CORE_PLAN_SNIPPET,
                str(file),
            ]
        else:
            argv = [sys.executable, "-m", "pyinstrument", "-o", str(target), "-m", "pitools", *cmd]
        proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, check=False)
        out[name] = str(target) if target.exists() else f"failed: {proc.stderr.decode()[-300:]}"
    return out


# -- human views against their JSON counterparts (issue 13) ------------------------------------

#: (name, human argv, JSON argv); "{f}" is the session file. Human output goes to /dev/null
#: (a pipe: no width limit), as in `pitools tree F > out.txt`.
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
    ("export markdown", ["export", "{f}"], ["export", "{f}", "--format", "jsonl"]),
]
#: Targets: every human view within 1.3x its JSON counterpart; export's peak memory at most 3x the file.
TARGET_HUMAN_RATIO = 1.3
TARGET_EXPORT_MEMORY = 3.0


def bench_human_views(pit: list[str], file: Path, env: dict[str, str], reps: int) -> dict[str, Any]:
    """Median wall time and peak RSS of each human view and its JSON counterpart on ``file``."""
    cases: list[tuple[str, Case, Case]] = []
    for name, human, as_json in HUMAN_PAIRS:
        h = Case(f"{name} (human)", [*pit, *(a.replace("{f}", str(file)) for a in human)], env)
        j = Case(f"{name} (json)", [*pit, *(a.replace("{f}", str(file)) for a in as_json)], env)
        cases.append((name, h, j))
    for rep in range(reps + 1):  # one warm-up round, then interleaved repetitions
        for _, h, j in cases:
            for case in (h, j):
                if case.error:
                    continue
                sample, tail = run_once(case.argv, case.env)
                if sample.rc not in case.ok_codes:
                    case.error = f"exit {sample.rc}: {tail.decode('utf-8', 'replace').strip()[-300:]}"
                elif rep > 0:
                    case.samples.append(sample)
    nbytes = file.stat().st_size
    out: dict[str, Any] = {"file": str(file), "bytes": nbytes, "views": {}}
    for name, h, j in cases:
        out["views"][name] = {
            "humanSeconds": h.median(),
            "jsonSeconds": j.median(),
            "ratio": ratio(h.median(), j.median()),
            "humanPeakRssBytes": h.peak_rss(),
            "memoryPerFileByte": (h.peak_rss() or 0) / nbytes if nbytes else None,
            "error": h.error or j.error,
        }
    return out


def human_markdown(section: dict[str, Any]) -> str:
    """The human-vs-JSON table for bench/RESULTS.md."""
    lines = [
        f"Human views vs JSON on {section['bytes'] / 1e6:.0f} MB "
        f"(target: human ≤ {TARGET_HUMAN_RATIO}× JSON; export peak RSS ≤ {TARGET_EXPORT_MEMORY:g}× the file)",
        "",
        "| view | human wall | JSON wall | human / JSON | human peak RSS | RSS / file |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, v in section["views"].items():
        if v["error"]:
            lines.append(f"| {name} | failed: {v['error'][:60]} | | | | |")
            continue
        memory_target = TARGET_EXPORT_MEMORY if name.startswith("export") else None
        per_byte = v["memoryPerFileByte"]
        lines.append(
            f"| {name} | {fmt_s(v['humanSeconds'])} | {fmt_s(v['jsonSeconds'])} "
            f"| {fmt_r(v['ratio'], TARGET_HUMAN_RATIO)} | {fmt_mb(v['humanPeakRssBytes'])} "
            f"| {fmt_r(per_byte, memory_target) if per_byte is not None else '—'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
