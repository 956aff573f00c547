"""``pitools watch``: through ``main()`` (``--once``), and live in a pseudo-terminal while a writer
appends Pi-shaped lines to the session, then Ctrl-C.

Expected numbers follow Pi's rules, not pitools' output: the reading at a leaf is what
``compact --dry-run`` reports as ``shouldCompact`` (checked against Pi 1.6.0 on the golden
sessions); after a reply with usage the context is that reply's ``totalTokens``
(``calculateContextTokens``); a user message adds ``ceil(chars / 4)`` (``estimateTokens``); Pi
compacts before the next turn when tokens > contextWindow - reserveTokens.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import Result

from tests.support import golden_session

Run = Callable[..., Result]
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "output" / "watch.schema.json").read_text())


@pytest.mark.parametrize("case", ["gen-s0001_v3", "gen-s0005_v3", "clone-s0022-compactions"])
def test_once_json_is_the_dry_run_check(run: Run, case: str) -> None:
    path = golden_session(case)
    meter = json.loads(run("watch", path, "--once", "--format", "json", "--no-config").stdout)
    jsonschema.validate(meter, SCHEMA)
    plan = json.loads(run("compact", path, "--dry-run", "--format", "json", "--no-config").stdout)
    check = plan["shouldCompact"]
    assert meter["tokens"] == check["tokens"]
    assert meter["contextWindow"] == check["contextWindow"]
    assert meter["reserveTokens"] == check["reserveTokens"]
    assert meter["threshold"] == check["threshold"]
    assert meter["willCompact"] == check["result"]
    assert meter["file"] == str(path) and meter["readBy"] == "replay"


def test_once_human_says_when_the_next_turn_compacts(run: Run) -> None:
    path = golden_session("gen-s0003_v3")
    tokens = json.loads(run("watch", path, "--once", "--format", "json", "--no-config").stdout)["tokens"]
    below = run("watch", path, "--once", "--no-config", "--context-window", tokens + 1001, "--reserve-tokens", 1000)
    assert below.stdout.rstrip().endswith(": 1 to go")
    above = run("watch", path, "--once", "--no-config", "--context-window", tokens + 999, "--reserve-tokens", 1000)
    assert "the next turn will compact first" in above.stdout


def test_a_missing_file_is_one_line(run: Run, tmp_path: Path) -> None:
    result = run("watch", tmp_path / "none.jsonl", "--once", exit_code=1)
    assert result.stderr.startswith("pitools: ") and "Traceback" not in result.stderr


# -- live, in a pseudo-terminal ----------------------------------------------------------------


class Terminal:
    """``pitools watch`` on a pty; reads what it shows."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pitools", *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,  # its own process group, as a shell's foreground job
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""

    def wait_for(self, pattern: str, timeout: float = 20.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.seen)
            if match:
                self.seen = self.seen[match.end() :]
                return match
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} in {self.seen!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # EIO: the other side closed
                    data = b""
                if not data:
                    raise AssertionError(f"watch ended without {pattern!r}; it showed {self.seen!r}")
                self.seen += data.decode("utf-8", "replace").replace("\r\n", "\n")

    def ctrl_c(self) -> int:
        # What the terminal does on Ctrl-C: SIGINT to the foreground process group.
        os.killpg(self.proc.pid, signal.SIGINT)
        code = self.proc.wait(timeout=20)
        try:
            while data := os.read(self.master, 65536):
                self.seen += data.decode("utf-8", "replace")
        except OSError:
            pass
        os.close(self.master)
        return code


def _append(path: Path, value: dict[str, object]) -> None:
    with open(path, "ab") as f:  # one whole line per write, as Pi's appendFileSync
        f.write(json.dumps(value, ensure_ascii=False).encode() + b"\n")


def test_watch_follows_appends_in_a_terminal_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    source = golden_session("gen-s0003_v3")
    path = tmp_path / "live.jsonl"
    path.write_bytes(source.read_bytes())
    last = json.loads(source.read_bytes().splitlines()[-1])
    window, reserve = 20000, 1000
    term = Terminal(
        ["watch", str(path), "--no-config", "--context-window", str(window), "--reserve-tokens", str(reserve)]
    )
    try:
        first = term.wait_for(r"context ([\d,]+) / 20,000 \([\d.]+%\) · anthropic/claude-opus-4-1 · (.*)\n")
        start = int(first.group(1).replace(",", ""))
        assert first.group(2) == f"compacts above 19,000 (reserve 1,000): {19000 - start:,} to go"

        # The user types: a message of 400 characters is 100 estimated tokens more.
        _append(
            path,
            {
                "type": "message",
                "id": "w0000001",
                "parentId": last["id"],
                "timestamp": "2025-03-10T12:31:00.000Z",
                "message": {"role": "user", "content": "x" * 400, "timestamp": 1741609860000},
            },
        )
        term.wait_for(rf"context {start + 100:,} / 20,000 .*: {19000 - start - 100:,} to go\n")

        # The model answers; its usage says the context is now 19,500 tokens: above 19,000.
        usage = {"input": 19000, "output": 500, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 19500}
        usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}  # type: ignore[assignment]
        _append(
            path,
            {
                "type": "message",
                "id": "w0000002",
                "parentId": "w0000001",
                "timestamp": "2025-03-10T12:31:09.000Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "done"}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-opus-4-1",
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": 1741609861000,
                },
            },
        )
        term.wait_for(r"context 19,500 / 20,000 \(97\.5%\) .*the next turn will compact first\n")

        # The file is rewritten shorter (as a repair or a rewrite would): read again from scratch.
        path.write_bytes(source.read_bytes())
        term.wait_for(rf"context {start:,} / 20,000 ")
    finally:
        code = term.ctrl_c()
    assert code == 0
    assert "Traceback" not in term.seen and "Aborted" not in term.seen


def test_watch_json_lines_while_following(tmp_path: Path) -> None:
    source = golden_session("gen-s0003_v3")
    path = tmp_path / "live.jsonl"
    path.write_bytes(source.read_bytes())
    last = json.loads(source.read_bytes().splitlines()[-1])
    term = Terminal(["watch", str(path), "--no-config", "--format", "json"])
    try:
        first = json.loads(term.wait_for(r"\{.*\}\n").group(0))
        jsonschema.validate(first, SCHEMA)
        assert first["readBy"] == "replay" and first["leafId"] == last["id"]
        message = {"role": "user", "content": "y" * 41, "timestamp": 1741609860000}
        _append(
            path,
            {
                "type": "message",
                "id": "w1",
                "parentId": last["id"],
                "timestamp": "2025-03-10T12:31:00Z",
                "message": message,
            },
        )
        second = json.loads(term.wait_for(r"\{.*\}\n").group(0))
        jsonschema.validate(second, SCHEMA)
        assert second["readBy"] == "append" and second["leafId"] == "w1"
        assert second["tokens"] == first["tokens"] + 11  # ceil(41 / 4)
    finally:
        code = term.ctrl_c()
    assert code == 0 and "Traceback" not in term.seen


def test_stdin_only_with_once(run: Run) -> None:
    data = golden_session("gen-s0003_v3").read_bytes()
    once = run("watch", "-", "--once", "--no-config", input=data)
    assert once.stdout.startswith("context ")
    follow = run("watch", "-", input=data, exit_code=2)
    assert "only goes with --once" in follow.stderr


def test_ctrl_c_through_main_is_exit_0_for_watch_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one error handler decides: Ctrl-C ends a watch with 0 and no line, any other run with 130."""
    import io

    from pitools.cli import Environment, main
    from pitools.ops import watch

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(watch, "follow", interrupted)
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), environ={})
    assert main(["watch", str(golden_session("gen-s0003_v3"))], env) == 0
    assert env.stderr.getvalue() == ""
    monkeypatch.setattr("pitools.core.session.load.load", interrupted)
    other = Environment(stdout=io.StringIO(), stderr=io.StringIO(), environ={})
    assert main(["context", str(golden_session("gen-s0003_v3"))], env) == 130
    assert main(["context", str(golden_session("gen-s0003_v3"))], other) == 130


def test_a_fifo_is_refused_in_one_line(run: Run, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = run("watch", fifo, "--once", exit_code=1)
    assert result.stderr.count("\n") == 1 and "not a regular file" in result.stderr


def test_a_session_id_prefix_is_found_like_everywhere(run: Run, tmp_path: Path) -> None:
    source = golden_session("gen-s0003_v3")
    header = json.loads(source.read_bytes().splitlines()[0])
    stored = tmp_path / f"2025-03-10T11-35-28-000Z_{header['id']}.jsonl"
    stored.write_bytes(source.read_bytes())
    result = run("watch", header["id"][:8], "--session-dir", tmp_path, "--once", "--format", "json", "--no-config")
    assert json.loads(result.stdout)["file"] == str(stored)
    assert header["id"][:8] in result.stderr  # the finder names the file it chose
