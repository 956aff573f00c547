#!/usr/bin/env python3
"""pitools' in-place writers racing a Pi-like appender, with SIGKILL at random points (issue 36).

Pi takes no lock: it appends each entry with ``appendFileSync`` by path, whenever the agent
produces one. In every trial a fake Pi (a separate process doing exactly that: open by path with
``O_APPEND``, one ``write`` of one line, close) appends a burst of Pi-shaped ``user`` messages at
a random moment while one of ``compact --apply``, ``navigate --summarize``, ``heal --apply``, ``repair``, ``slim``
or ``redact --in-place`` runs, and pitools is SIGKILLed at a random moment in a share of the
trials. Each trial then checks:

* **no lost line**: every line the fake Pi wrote is in the file, byte for byte, exactly once;
* **no torn line**: every line of the file is a line of the original, a line of Pi's, or
  complete JSON (pitools' own output); the file ends with a newline when the original did;
* **no stale append**: a compaction pitools appended hangs under the line right before it (the
  leaf it planned against is still Pi's leaf: no Pi line slipped in between);
* **every refusal says what happened**: exit 0, or exit 1 with one ``pitools: …`` line on
  stderr (never an internal error or a traceback);
* **backups**: no partial backup (``.pitools-tmp`` temp files are allowed right after a kill).

With ``--full-disk`` (root on Linux: a small tmpfs is mounted) the session sits on a file system
with a few KiB free, pitools runs with ``--no-backup`` and its write fails with ENOSPC while Pi's
short lines still fit: the same checks hold (pitools removes only its own partial line).

Usage: scripts/stress_concurrent.py [--trials 1000] [--writer all|NAME] [--kill-share 0.3]
                                    [--seed 1] [--full-disk] [--json FILE]
Exit status: 0 when no trial broke a rule, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SESSION = "session.jsonl"
WRITERS = ["compact", "navigate", "heal", "repair", "slim", "redact"]

#: The fake Pi: after DELAY seconds, append COUNT user messages by path (one write each, a
#: short random pause between them), printing each id once its write returned.
FAKE_PI = r"""
import json, os, random, sys, time
path, delay, count, parent, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
rnd = random.Random(seed)
time.sleep(delay)
for n in range(count):
    eid = f"pi{seed:x}n{n}"
    entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
             "message": {"role": "user", "content": f"the newest prompt {n}", "timestamp": 1767225600000}}
    line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        written = os.write(fd, line)
    except OSError as exc:
        print("fail", eid, exc.errno, flush=True)
        written = -1
    finally:
        os.close(fd)
    if written == len(line):
        print("ok", eid, line.decode().rstrip("\n"), flush=True)
        parent = eid
    elif written >= 0:
        print("short", eid, written, flush=True)
    time.sleep(rnd.uniform(0, 0.003))
"""


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


stress_crash = sys.modules.get("stress_crash") or _load("stress_crash")


@dataclass
class Racer:
    """One pitools writer under test: its command line (``{f}`` is the session) and its input."""

    name: str
    original: bytes
    args: list[str]
    durations: list[float] = field(default_factory=list)


def build_racers(which: str, seed: int, no_backup: bool) -> list[Racer]:
    """The five in-place writers of issue 36, on sessions sized to run a trial in about a second."""
    extra = ["--no-backup"] if no_backup else []
    names = WRITERS if which == "all" else [which]
    racers: list[Racer] = []
    built = {w.args[0]: w for w in stress_crash.build_writers(0.04, seed, no_backup, "all") if w.kind == "replace"}
    for name in names:
        if name == "compact":
            data = stress_crash.v3_session(0.04, seed + 1)
            args = ["compact", "{f}", "--apply", "--model", "builtin", "--no-config", "--keep-recent-tokens", "2000"]
            racers.append(Racer("compact --apply", data, [*args, *extra]))
        elif name == "navigate":
            data = stress_crash.v3_session(0.04, seed + 6)
            to = stress_crash._user_message_id(data)
            args = ["navigate", "{f}", "--to", to, "--summarize", "--label", "back", "--model", "builtin"]
            racers.append(Racer("navigate --summarize", data, [*args, "--yes", "--no-config", *extra]))
        elif name == "heal":
            # A Codex turn resumed on Claude (golden/heal-handoff): heal --apply appends its edits.
            case = ROOT / "golden" / "heal-handoff"
            data = (case / "session.jsonl").read_bytes()
            target = (case / "target.txt").read_text(encoding="utf-8").strip()
            args = ["heal", "{f}", "--for-model", target, "--apply", "--yes", "--no-config"]
            racers.append(Racer("heal --apply", data, [*args, *extra]))
        else:
            w = built[name]
            args = [a.replace("{folder}/" + SESSION, "{f}") for a in w.args]
            racers.append(Racer(f"{name} --in-place", w.original, args))
    return racers


def _last_id(data: bytes) -> str:
    for line in reversed(data.splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                return value["id"]
    return "none"


def _json_line(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def check(
    racer: Racer,
    final: bytes,
    pi_lines: list[bytes],
    rc: int | None,
    err: str,
    folder: Path,
    pi_torn: frozenset[str] = frozenset(),
) -> list[str]:
    """The rules of the module docstring; returns what broke. ``pi_torn``: ids of lines the fake
    Pi itself wrote only in part (a full disk): a line holding one is Pi's doing, as it would be
    with the real Pi."""
    broken: list[str] = []
    lines = final.split(b"\n")
    tail = lines.pop()  # what follows the last newline
    marks = [f'"id":"{eid}"'.encode() for eid in pi_torn]
    lines = [ln for ln in lines if not any(m in ln for m in marks)]
    if tail and any(m in tail for m in marks):
        tail = b""
    if tail and racer.original.endswith(b"\n"):
        broken.append(f"the file ends without a newline: {tail[:80]!r}")
    for pl in pi_lines:
        n = lines.count(pl)
        if n != 1:
            broken.append(f"Pi's line {pl[:60]!r}… is in the file {n} times")
    known = set(racer.original.replace(b"\r\n", b"\n").split(b"\n")) | set(pi_lines)
    for i, line in enumerate(lines):
        bare = line.rstrip(b"\r")
        if bare in known or line in known:
            continue
        value = _json_line(line)
        if value is None:
            broken.append(f"torn line {i + 1}: {line[:80]!r}")
        elif (
            racer.name.startswith(("compact", "heal"))
            and isinstance(value, dict)
            and value.get("type") in ("compaction", "context_edit")
        ):
            before = _json_line(lines[i - 1]) if i else None
            if isinstance(before, dict) and value.get("parentId") != before.get("id"):
                parent = value.get("parentId")
                broken.append(f"stale append: the {value.get('type')} hangs under {parent}, after {before.get('id')}")
    if rc is not None and rc != 0:
        shown = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("pitools: asking")]
        shown = [ln for ln in shown if not ln.startswith("pitools: summarizing with")]
        if rc != 1 or not shown or not shown[-1].startswith("pitools: ") or "Traceback" in err:
            broken.append(f"exit {rc} without one clear line: {err[-300:]!r}")
    # A backup is the file as pitools read it: the original plus the Pi lines written before that.
    read_states = {racer.original + b"".join(pl + b"\n" for pl in pi_lines[:k]) for k in range(len(pi_lines) + 1)}
    for p in folder.iterdir():
        if ".bak-" in p.name and p.read_bytes() not in read_states:
            broken.append(f"a backup that is not the file pitools read: {p.name} ({p.stat().st_size} bytes)")
    return broken


def _pi_log(out: str) -> tuple[list[bytes], Counter[str], frozenset[str]]:
    lines: list[bytes] = []
    events: Counter[str] = Counter()
    torn: set[str] = set()
    for row in out.splitlines():
        kind, _, rest = row.partition(" ")
        events[kind] += 1
        if kind == "ok":
            lines.append(rest.partition(" ")[2].encode())
        elif kind == "short":
            torn.add(rest.partition(" ")[0])
    return lines, events, frozenset(torn)


def trial(
    racer: Racer,
    folder: Path,
    rnd: random.Random,
    kill: bool,
    span: float,
    env: dict[str, str],
    n: int,
    leave: int | None = None,
) -> tuple[list[str], str]:
    """One race; returns (what broke, how pitools ended). ``leave``: fill the file system up to
    that many free bytes once the session is written."""
    for p in folder.iterdir():
        p.unlink()
    session = folder / SESSION
    session.write_bytes(racer.original)
    if leave is not None:
        _fill(folder, leave)
    argv = [*stress_crash.pitools_argv(), *(a.replace("{f}", str(session)) for a in racer.args)]
    delay = rnd.uniform(0, span)
    count = rnd.randint(1, 4)
    pi = subprocess.Popen(
        [sys.executable, "-c", FAKE_PI, str(session), f"{delay:.4f}", str(count), _last_id(racer.original), str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, cwd=folder
    )
    killed = False
    if kill:
        try:
            proc.wait(timeout=rnd.uniform(0, span))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
            killed = True
    _, err_b = proc.communicate(timeout=300)
    if not killed:
        racer.durations.append(time.perf_counter() - start)
    pi_out, pi_err = pi.communicate(timeout=60)
    pi_lines, events, pi_torn = _pi_log(pi_out)
    err = err_b.decode("utf-8", "replace")
    rc = None if killed else proc.returncode
    broken = check(racer, session.read_bytes(), pi_lines, rc, err, folder, pi_torn)
    if pi.returncode != 0:
        broken.append(f"the fake Pi failed: {pi_err[-200:]!r}")
    if killed:
        outcome = "killed"
    elif proc.returncode == 0:
        outcome = "written"
    else:
        outcome = "refused: " + _gist(err)
    if events.get("fail") or events.get("short"):
        outcome += " (a Pi write failed too)"
    return broken, outcome


def _gist(err: str) -> str:
    """The refusal without paths and numbers, to count kinds."""
    import re

    last = [ln for ln in err.splitlines() if ln.startswith("pitools: ")][-1:] or [err[-100:]]
    text = last[0].split(": ", 2)[-1]
    return re.sub(r"\d[\d,]*", "N", text)[:110]


@contextlib.contextmanager
def full_disk(folder: Path) -> Iterator[Path]:
    """A tmpfs of 256 KiB under ``folder`` (root on Linux), to be filled by the caller."""
    where = folder / "mnt"
    where.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"--full-disk: cannot mount a tmpfs ({proc.stderr.decode().strip()}); run as root on Linux")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path, leave: int) -> None:
    """Leave about ``leave`` bytes free (whole pages: Pi's short lines still fit in the session's
    last page, pitools' longer entry does not)."""
    filler = folder.parent / "filler"
    with contextlib.suppress(FileNotFoundError):
        filler.unlink()
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with contextlib.suppress(OSError), open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))


def stress(
    racer: Racer, trials: int, rnd: random.Random, work: Path, env: dict[str, str], kill_share: float, disk: bool
) -> dict[str, Any]:
    folder = work / "trial"
    folder.mkdir(parents=True, exist_ok=True)
    # A clean run first: how long the command takes, so Pi's lines and the kills spread over it.
    for p in folder.iterdir():
        p.unlink()
    (folder / SESSION).write_bytes(racer.original)
    argv = [*stress_crash.pitools_argv(), *(a.replace("{f}", str(folder / SESSION)) for a in racer.args)]
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=env, cwd=folder, timeout=300, check=False)
    span = max(0.05, time.perf_counter() - start)
    violations: list[dict[str, Any]] = []
    outcomes: Counter[str] = Counter()
    for n in range(trials):
        leave = rnd.choice([0, 4096]) if disk else None
        broken, outcome = trial(racer, folder, rnd, rnd.random() < kill_share, span, env, n, leave)
        outcomes[outcome] += 1
        if broken:
            violations.append({"trial": n, "outcome": outcome, "broken": broken[:5]})
    return {
        "writer": racer.name,
        "trials": trials,
        "secondsPerRun": round(span, 3),
        "outcomes": dict(outcomes.most_common()),
        "violations": violations,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=1000, help="trials per writer (default 1000)")
    p.add_argument("--writer", default="all", choices=["all", *WRITERS])
    p.add_argument("--kill-share", type=float, default=0.3, help="share of trials with a SIGKILL (default 0.3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--full-disk", action="store_true", help="on a nearly full tmpfs, with --no-backup (root)")
    p.add_argument("--json", type=Path, default=None, help="also write the summary here")
    args = p.parse_args(argv)
    env = dict(os.environ)
    env.pop("PITOOLS_DEBUG", None)
    rnd = random.Random(args.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="pitools-race-") as scratch:
        env["PI_CODING_AGENT_DIR"] = str(Path(scratch) / "no-agent")
        ctx = full_disk(Path(scratch)) if args.full_disk else contextlib.nullcontext(Path(scratch))
        with ctx as work:
            for racer in build_racers(args.writer, args.seed, args.full_disk):
                result = stress(racer, args.trials, rnd, work, env, args.kill_share, args.full_disk)
                results.append(result)
                bad = len(result["violations"])
                print(f"{racer.name}: {args.trials} trials, {bad} broke a rule; {result['outcomes']}", flush=True)
                for v in result["violations"][:5]:
                    print(f"  trial {v['trial']} ({v['outcome']}): {v['broken']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 1 if any(r["violations"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
