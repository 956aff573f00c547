#!/usr/bin/env python3
"""Kill pitools' writers with SIGKILL at random moments and check nothing is ever torn.

Every command that writes is covered (``--writer all``, the default of ``make stress``):

* rewrites of the session itself (temp file + fsync + rename): ``migrate --in-place``,
  ``repair --in-place``, ``slim --in-place``, ``redact --in-place``. After a kill the file must
  be the original bytes or exactly the bytes of an uninterrupted run, and when it is the new
  version a complete backup of the original must be next to it (unless ``--no-backup``);
* appends (one fsynced line): ``compact --apply`` with the offline ``builtin`` summarizer and
  against a local fake model server (OpenAI wire, as the tests use). The file must be the
  original, or the original plus exactly one complete ``compaction`` line whose parent is the
  old leaf (and a complete backup);
* new files (``write_new``: temp file, then published under a name that must be free):
  ``fork --at -o``, ``clone -o``, ``export -o`` (markdown, html, jsonl), ``redact -o``,
  ``dataset -o DIR`` (jsonl tables of several sessions). The session must be untouched and the
  output absent or complete: exactly the bytes of an uninterrupted run, or for outputs that
  carry fresh ids and timestamps (fork, clone, export jsonl) the same number of complete JSON
  lines of the same entry types;
* the archive index (``index --session-dir``, with its own ``PITOOLS_CACHE_DIR`` per trial),
  killed mid-build.

After a kill that left nothing written (and after every kill of ``dataset`` and ``index``) the
writer runs again uninterrupted, as a user would: it must succeed, finish the work and (dataset,
index) give exactly the answers of a clean run (the table files; ``search`` and ``usage`` over
the index), so a stray temp file, a partial table or a half-built index cannot trip a later run.
Leftovers are counted: temp files (``.*.pitools-tmp``, expected right after a SIGKILL; the next
write to the same file removes them) and backups shorter than the original (killed while
copying).

Usage: scripts/stress_crash.py [--trials 1000] [--writer all|both|NAME] [--size-mb 0.3]
                               [--seed 1] [--no-backup] [--json FILE] [--work DIR]
Exit status: 0 when no trial left a torn file or a failed rerun, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SESSION = "session.jsonl"
OUT = "out"
#: Writers by name (``--writer``); "both" is the historical default pair.
GROUPS = {"both": ["migrate", "compact"]}


def pitools_argv() -> list[str]:
    script = Path(sys.executable).with_name("pitools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pitools"]


def _gen_big() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_big", ROOT / "scripts" / "gen_big.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def v3_session(size_mb: float, seed: int) -> bytes:
    return bytes(_gen_big().generate(size_mb, seed))


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


# -- a local fake model (OpenAI chat completions, non-streaming) ------------------------------------


class FakeModel:
    """A loopback HTTP server answering every chat completion with a fixed summary."""

    def __init__(self) -> None:
        reply = {
            "id": "chatcmpl-stress",
            "object": "chat.completion",
            "model": "stress-model",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "## Goal\nStress."}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
        }
        data = json.dumps(reply).encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with contextlib.suppress(OSError):  # the client was killed
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client killed mid-request is what this script does on purpose

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.folders: list[Path] = []  # agent folders made for it, removed with it
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def agent_dir(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        self.folders.append(folder)
        models = {
            "providers": {
                "stress": {
                    "baseUrl": self.url + "/v1",
                    "api": "openai-completions",
                    "apiKey": "stress-key-not-secret",
                    "models": [{"id": "m", "contextWindow": 200000, "maxTokens": 8192}],
                }
            }
        }
        (folder / "models.json").write_text(json.dumps(models))
        return folder


# -- writers ----------------------------------------------------------------------------------------


@dataclass
class Writer:
    """One command under test.

    kind: ``replace`` (the session is rewritten), ``append`` (one line appended), ``new`` (a new
    file ``out``), ``dir`` (a new folder ``out`` of tables), ``index`` (the archive index).
    ``files`` are the input files, relative to the trial folder; ``{folder}`` in ``args``,
    ``queries`` and ``env`` values is replaced by the trial folder.
    """

    name: str
    kind: str
    files: dict[str, bytes]
    args: list[str]
    leaf: str | None = None  # append: the parent of the appended entry
    queries: list[list[str]] = field(default_factory=list)  # index: the answers to compare
    env: dict[str, str] = field(default_factory=dict)
    backup: bool = True
    expected: Any = None  # learnt at calibration: bytes, a line shape, or a snapshot
    exact: bool = True  # new: the output has the same bytes every run (else: the same shape)
    durations: list[float] = field(default_factory=list)

    @property
    def original(self) -> bytes:
        return self.files.get(SESSION, b"")

    def argv(self, folder: Path) -> list[str]:
        return [*pitools_argv(), *(a.replace("{folder}", str(folder)) for a in self.args)]

    def environ(self, base: dict[str, str], folder: Path) -> dict[str, str]:
        return {**base, **{k: v.replace("{folder}", str(folder)) for k, v in self.env.items()}}


def _shape(data: bytes) -> list[str] | None:
    """The entry types of a complete JSONL file, or None when any line is incomplete."""
    if not data.endswith(b"\n"):
        return None
    types = []
    for line in data.splitlines():
        try:
            types.append(str(json.loads(line).get("type")))
        except (ValueError, AttributeError):
            return None
    return types


def _portable(data: bytes, folder: Path) -> bytes:
    """Output bytes with the trial folder's path replaced (transcripts and manifests name it)."""
    return data.replace(os.fsencode(folder), b"{folder}")


def _snapshot(folder: Path, root: Path) -> dict[str, bytes]:
    """Every file under ``folder``, portable; the dataset manifest without file mtimes (every
    trial writes its inputs anew)."""
    if not folder.is_dir():
        return {}
    snap = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.endswith(".pitools-tmp"):  # counted as leftovers
            data = _portable(p.read_bytes(), root)
            if p.name == "_pitools_dataset.json":
                with contextlib.suppress(ValueError, AttributeError):
                    manifest = json.loads(data)
                    for record in manifest.get("sessions", {}).values():
                        record.pop("mtimeNs", None)
                    data = json.dumps(manifest, sort_keys=True).encode()
            snap[str(p.relative_to(folder))] = data
    return snap


def _user_message_id(session: bytes) -> str:
    """The id of a user message in the middle of the default path (fork's --at)."""
    ids = []
    for line in session.splitlines():
        value = json.loads(line)
        if value.get("type") == "message" and (value.get("message") or {}).get("role") == "user":
            ids.append(value["id"])
    return str(ids[len(ids) // 2])


def build_writers(
    size_mb: float, seed: int, no_backup: bool, which: str, model: Callable[[], FakeModel] | None = None
) -> list[Writer]:
    extra = ["--no-backup"] if no_backup else []
    names = GROUPS.get(which, [which]) if which != "all" else None
    want = (lambda n: True) if names is None else (lambda n: n in names)
    writers: list[Writer] = []
    fresh = lambda s: v3_session(size_mb, seed + s)  # noqa: E731
    session = lambda data: {SESSION: data}  # noqa: E731
    f = "{folder}/" + SESSION
    out = "{folder}/" + OUT
    backup = not no_backup
    if want("migrate"):
        args = ["migrate", f, "--in-place", *extra]
        writers.append(Writer("migrate --in-place", "replace", session(v1_session(size_mb, seed)), args, backup=backup))
    if want("repair"):
        # A torn write fused into the next line, plus CRLF endings: several fixes in one rewrite.
        lines = fresh(2).splitlines(keepends=True)
        k = len(lines) // 2
        lines[k] = lines[k][: len(lines[k]) // 2] + lines.pop(k + 1)
        damaged = b"".join(line.rstrip(b"\n") + b"\r\n" for line in lines)
        args = ["repair", f, "--in-place", "--reattach", *extra]
        writers.append(Writer("repair --in-place", "replace", session(damaged), args, backup=backup))
    if want("slim"):
        # About 1 MB: Pi's first auto-compaction comes at ~700 KB of text, leaving content to slim.
        data = v3_session(max(size_mb, 1.2), seed + 3)
        args = ["slim", f, "--in-place", "--thinking", "--tool-output", "1000", *extra]
        writers.append(Writer("slim --in-place", "replace", session(data), args, backup=backup))
    redact = ["--key", "stress", "--value", "pi-session-tools", "--paths", "--no-pi-keys"]
    if want("redact"):
        args = ["redact", f, "--in-place", *redact, *extra]
        writers.append(Writer("redact --in-place", "replace", session(fresh(4)), args, backup=backup))
    compact = ["--keep-recent-tokens", "2000", "--format", "json", *extra]
    if want("compact"):
        data = fresh(1)
        args = ["compact", f, "--apply", "--model", "builtin", "--no-config", *compact]
        leaf = json.loads(data.splitlines()[-1])["id"]
        writers.append(
            Writer("compact --apply --model builtin", "append", session(data), args, leaf=leaf, backup=backup)
        )
    if want("compact-model") and model is not None:
        data = fresh(5)
        agent = model().agent_dir(Path(tempfile.mkdtemp(prefix="pitools-stress-agent-")))
        args = ["compact", f, "--apply", "--model", "stress/m", "--yes", *compact]
        leaf = json.loads(data.splitlines()[-1])["id"]
        env = {"PI_CODING_AGENT_DIR": str(agent)}
        name = "compact --apply (local model server)"
        writers.append(Writer(name, "append", session(data), args, leaf=leaf, env=env, backup=backup))
    if want("redact-o"):
        args = ["redact", f, "-o", out, *redact]
        writers.append(Writer("redact -o", "new", session(fresh(4)), args))
    if want("fork"):
        data = fresh(6)
        args = ["fork", f, "--at", _user_message_id(data), "-o", out]
        writers.append(Writer("fork --at -o", "new", session(data), args))
    if want("clone"):
        writers.append(Writer("clone -o", "new", session(fresh(7)), ["clone", f, "-o", out]))
    for fmt in ("markdown", "html", "jsonl"):
        if want(f"export-{fmt}") or want("export"):
            args = ["export", f, "--format", fmt, "-o", out]
            writers.append(Writer(f"export --format {fmt} -o", "new", session(fresh(8)), args))
    if want("dataset"):
        files = {SESSION: fresh(9), **{f"sessions/s{i}.jsonl": fresh(10 + i) for i in range(4)}}
        args = ["dataset", f, "{folder}/sessions", "-o", out, "--format", "jsonl"]
        writers.append(Writer("dataset -o (jsonl)", "dir", files, args))
    if want("index"):
        # Ten sessions of 3 × size (0.9 MB by default): past the index's thresholds for parallel
        # workers (8 files, 8 MB), so a kill also lands while workers are writing their shards.
        files = {f"sessions/s{i}.jsonl": v3_session(3 * size_mb, seed + 20 + i) for i in range(10)}
        env = {"PITOOLS_CACHE_DIR": "{folder}/cache"}
        sd = ["--session-dir", "{folder}/sessions"]
        queries = [["search", "test", *sd, "--format", "json"], ["usage", *sd, "--format", "json"]]
        writers.append(
            Writer("index (build)", "index", files, ["index", *sd, "--format", "json"], queries=queries, env=env)
        )
    return writers


# -- one trial --------------------------------------------------------------------------------------


def _setup(writer: Writer, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, data in writer.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def _spawn(writer: Writer, folder: Path, delay: float | None, env: dict[str, str]) -> tuple[bool, int, str, float]:
    """Run the writer, SIGKILL it after ``delay`` seconds: (killed, exit code, stderr tail, seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        writer.argv(folder),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=writer.environ(env, folder),
        cwd=folder,
        start_new_session=True,  # index workers die with it (the group is killed)
    )
    killed = False
    if delay is not None:
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            killed = True
    _out, err = proc.communicate(timeout=600)
    if killed:  # a worker of the group may still be on its way out
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return killed, proc.returncode, (lines[-1] if lines else "")[:200], time.perf_counter() - start


def _answers(writer: Writer, folder: Path, env: dict[str, str]) -> list[str]:
    out = []
    for query in writer.queries:
        argv = [*pitools_argv(), *(a.replace("{folder}", str(folder)) for a in query)]
        proc = subprocess.run(
            argv, capture_output=True, env=writer.environ(env, folder), cwd=folder, timeout=600, check=False
        )
        out.append(
            f"exit {proc.returncode}: " + proc.stdout.decode("utf-8", "replace").replace(str(folder), "{folder}")
        )
    return out


def state(writer: Writer, folder: Path) -> str:
    """'original', 'complete', 'absent' (new: no output yet), 'partial' (dir/index: the work is not
    finished; a rerun decides), or 'torn: ...'."""
    untouched = writer.kind not in ("new", "dir") or SESSION not in writer.files
    if not untouched and (folder / SESSION).read_bytes() != writer.original:
        return "torn: the session itself changed"
    if writer.kind == "replace":
        data = (folder / SESSION).read_bytes()
        if data == writer.original:
            return "original"
        if data != writer.expected:
            return "torn: neither the original nor the rewritten file"
        return _backup_state(writer, folder)
    if writer.kind == "append":
        data = (folder / SESSION).read_bytes()
        if data == writer.original:
            return "original"
        if not data.startswith(writer.original):
            return "torn: the original bytes changed"
        tail = data[len(writer.original) :]
        newlines = tail.count(b"\n")
        if not tail.endswith(b"\n") or newlines != 1:
            return f"torn: {newlines} newline(s) in {len(tail)} appended bytes"
        try:
            entry = json.loads(tail)
        except ValueError:
            return "torn: the appended line is not JSON"
        if entry.get("type") != "compaction" or entry.get("parentId") != writer.leaf:
            return "torn: the appended line is not a compaction of the leaf"
        return _backup_state(writer, folder)
    if writer.kind == "new":
        target = folder / OUT
        if not target.exists():
            return "absent"
        data = _portable(target.read_bytes(), folder)
        if writer.exact:
            return "complete" if data == writer.expected else "torn: the output differs from an uninterrupted run"
        return "complete" if _shape(data) == writer.expected else "torn: the output is not a complete session"
    if writer.kind == "dir":
        return "complete" if _snapshot(folder / OUT, folder) == writer.expected else "partial"
    return "partial"  # index: only a rerun's answers tell


def _backup_state(writer: Writer, folder: Path) -> str:
    if not writer.backup:
        return "complete"
    sizes = [p.stat().st_size for p in folder.iterdir() if ".bak-" in p.name]
    return "complete" if len(writer.original) in sizes else "torn: rewritten without a complete backup"


def calibrate(writer: Writer, work: Path, env: dict[str, str]) -> None:
    """Three uninterrupted runs: the duration, and what a complete result is."""
    results = []
    for _ in range(3):
        folder = work / "trial"
        _setup(writer, folder)
        _killed, rc, err, seconds = _spawn(writer, folder, None, env)
        if rc != 0:
            raise SystemExit(f"stress_crash: an uninterrupted {writer.name} failed (exit {rc}): {err}")
        writer.durations.append(seconds)
        if writer.kind == "replace":
            results.append((folder / SESSION).read_bytes())
        elif writer.kind == "new":
            results.append(_portable((folder / OUT).read_bytes(), folder))
        elif writer.kind == "dir":
            results.append(_snapshot(folder / OUT, folder))
        elif writer.kind == "index":
            results.append(_answers(writer, folder, env))
    if writer.kind == "replace":
        assert results[0] == results[1] == results[2], f"{writer.name} is not deterministic"
        writer.expected = results[0]
    elif writer.kind == "new":
        writer.exact = results[0] == results[1] == results[2]
        writer.expected = results[0] if writer.exact else _shape(results[0])
        assert writer.exact or all(_shape(r) == writer.expected for r in results), writer.name
    elif writer.kind in ("dir", "index"):
        assert results[0] == results[1] == results[2], f"{writer.name} is not deterministic"
        writer.expected = results[0]
    else:
        _setup(writer, work / "trial")
        assert state(writer, work / "trial") == "original"


def rerun(writer: Writer, folder: Path, env: dict[str, str]) -> str:
    """Run the writer again to the end after a kill: '' when it finished the work, else what failed."""
    _killed, rc, err, _s = _spawn(writer, folder, None, env)
    if rc != 0:
        return f"rerun failed (exit {rc}: {err})"
    if writer.kind == "index":
        answers = _answers(writer, folder, env)
        return "" if answers == writer.expected else "rerun: the index answers differ from a clean build"
    after = state(writer, folder)
    return "" if after == "complete" else f"rerun left the result {after!r}"


def leftovers(folder: Path, original: bytes) -> Counter[str]:
    found: Counter[str] = Counter()
    for p in folder.rglob("*"):
        if p.name.endswith(".pitools-tmp"):
            found["temp file"] += 1
        elif ".bak-" in p.name and p.stat().st_size != len(original):
            found["partial backup"] += 1
    return found


def stress(
    writer: Writer,
    trials: int,
    rng: random.Random,
    work: Path,
    env: dict[str, str],
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    calibrate(writer, work, env)
    typical = statistics.median(writer.durations)
    outcomes: Counter[str] = Counter()
    left: Counter[str] = Counter()
    left_after: Counter[str] = Counter()
    violations: list[dict[str, Any]] = []
    failures: Counter[str] = Counter()
    killed_count = reruns = 0

    def summary(done: int) -> dict[str, Any]:
        return {
            "writer": writer.name,
            "trials": done,
            "killed": killed_count,
            "reruns": reruns,
            "typicalSeconds": typical,
            "inputBytes": sum(len(d) for d in writer.files.values()),
            "outcomes": dict(outcomes),
            "leftovers": dict(left),
            "leftoversAfterRerun": dict(left_after),
            "writerFailures": dict(failures),
            "violations": violations,
        }

    for i in range(trials):
        # Half the kills anywhere in the run, half in its last 40 % (where the file is written).
        delay = rng.uniform(0, typical * 1.05) if i % 2 == 0 else rng.uniform(typical * 0.6, typical * 1.05)
        folder = work / "trial"  # one name: outputs that name their input (dataset keys) compare
        _setup(writer, folder)
        killed, rc, err, seconds = _spawn(writer, folder, delay, env)
        outcome = state(writer, folder)
        killed_count += killed
        if not killed:
            # The machine got faster (or less loaded) than at calibration: follow it, so the
            # kills keep landing inside the run.
            writer.durations.append(seconds)
            typical = statistics.median(writer.durations[-15:])
            if rc != 0:  # not a kill: the writer itself failed (a bug, or a refused write)
                failures[f"exit {rc}: {err}"] += 1
        problem = outcome if outcome.startswith("torn") else ""
        left += leftovers(folder, writer.original)
        if not problem and killed and outcome in ("original", "absent", "partial"):
            reruns += 1
            problem = rerun(writer, folder, env)
            left_after += leftovers(folder, writer.original)
        key = "VIOLATION" if problem else outcome
        outcomes[f"{key} ({'killed' if killed else 'finished'})"] += 1
        if problem:
            keep = work / f"violation-{i}"
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(folder, keep, symlinks=True)
            violations.append({"trial": i, "delay": delay, "detail": problem, "kept": str(keep)})
        shutil.rmtree(folder, ignore_errors=True)
        if (i + 1) % 100 == 0:
            print(f"stress_crash: {writer.name}: {i + 1}/{trials} trials", file=sys.stderr)
            if progress is not None:  # a long run that is stopped still reports how far it got
                progress(summary(i + 1))

    return summary(trials)


WRITER_NAMES = [
    "migrate",
    "repair",
    "slim",
    "redact",
    "compact",
    "compact-model",
    "redact-o",
    "fork",
    "clone",
    "export",
    "export-markdown",
    "export-html",
    "export-jsonl",
    "dataset",
    "index",
]


@contextlib.contextmanager
def fake_model() -> Iterator[Callable[[], FakeModel]]:
    servers: list[FakeModel] = []

    def make() -> FakeModel:
        servers.append(FakeModel())
        return servers[-1]

    try:
        yield make
    finally:
        for s in servers:
            s.httpd.shutdown()
            s.httpd.server_close()
            for folder in s.folders:
                shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=1000, help="trials per writer (default 1000)")
    p.add_argument(
        "--writer", action="append", choices=["all", "both", *WRITER_NAMES], help="repeatable (default: all)"
    )
    p.add_argument("--size-mb", type=float, default=0.3, help="session size (default 0.3 MB)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-backup", action="store_true", help="run the rewriting writers with --no-backup")
    p.add_argument("--json", type=Path, default=None, help="also write the summary here")
    p.add_argument("--work", type=Path, default=None, help="working folder (default: a temp folder)")
    args = p.parse_args(argv)

    rng = random.Random(args.seed)
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(Path(tempfile.gettempdir()) / "pitools-stress-no-agent"))
    env.pop("PITOOLS_DEBUG", None)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(name, None)  # the fake model is on loopback
    work = args.work or Path(tempfile.mkdtemp(prefix="pitools-stress-"))
    work.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    summary = {"seed": args.seed, "sizeMb": args.size_mb, "noBackup": args.no_backup, "results": results}
    with fake_model() as model:
        writers = []
        for which in args.writer or ["all"]:
            writers += build_writers(args.size_mb, args.seed, args.no_backup, which, model)
        for w in writers:

            def progress(partial: dict[str, Any]) -> None:
                if args.json:
                    done = {**summary, "results": [*results, partial]}
                    args.json.write_text(json.dumps(done, indent=2) + "\n")

            results.append(stress(w, args.trials, rng, work, env, progress))
            if args.json:  # after each writer, so a long run that is stopped still reports
                args.json.write_text(json.dumps(summary, indent=2) + "\n")
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    bad = sum(len(r["violations"]) for r in results)
    if bad:
        print(f"stress_crash: {bad} violation(s); kept in {work}", file=sys.stderr)
        return 1
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
