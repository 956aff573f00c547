"""The output layer, through the real CLI in the environments where it used to fail.

Each test runs ``python -m pitools`` as a subprocess: a pseudo-terminal for NO_COLOR /
FORCE_COLOR / TERM=dumb, the locales of container images (LANG=C.UTF-8, LANG=C,
PYTHONIOENCODING=ascii/latin-1), a reader that closes the pipe early, and a hostile session
with escape sequences and bidi characters in every printed field.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.golden.test_conformance import GOLDEN

ROOT = Path(__file__).resolve().parents[2]
SEED = GOLDEN / "seed-running-example" / "session.jsonl"
GEN = GOLDEN / "gen-s0000_v3" / "session.jsonl"
SGR = re.compile(rb"\x1b\[[0-9;]*m")

#: Everything a terminal could act on: C0 controls but TAB/LF, DEL, C1 controls (UTF-8), the
#: bidi embeddings/overrides/isolates and marks, line/paragraph separators.
RAW_CONTROL = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c"
)
#: What JSON may hold raw: JSON escapes every C0 control itself; other characters stay as they
#: are in the session (JSON output is exact).
RAW_C0 = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]")


def _env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "PITOOLS_WIDTH", "COLUMNS")}
    env["PI_CODING_AGENT_DIR"] = "/nonexistent/pitools-test-agent-dir"
    env["HOME"] = "/nonexistent"
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def pitools(
    *args: str | Path, env: Mapping[str, str | None] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pitools", *map(str, args)],
        capture_output=True,
        env=_env(env),
        cwd=cwd,
        check=False,
        timeout=120,
    )


def in_pty(
    *args: str | Path, env: Mapping[str, str | None] | None = None, answer: bytes | None = None
) -> tuple[int, bytes]:
    """Run pitools with stdin, stdout and stderr on a pseudo-terminal; returns (status, output).

    ``answer`` is typed once the output shows a ``[y/N]`` prompt."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pitools", *map(str, args)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        # No progress spinner unless a test asks for one (a loaded machine may pass the 1 s), and
        # no pager (tree's, on a terminal): these tests read pitools' own bytes, not less's.
        env=_env({"COLUMNS": "120", "PITOOLS_PROGRESS_DELAY": "3600", "PITOOLS_PAGER": "cat", **(env or {})}),
        close_fds=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
        if answer is not None and b"[y/N]" in b"".join(chunks):
            os.write(master, answer)
            answer = None
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks)


# -- colour ---------------------------------------------------------------------------------------


def test_a_terminal_gets_colour_by_default() -> None:
    status, out = in_pty("validate", SEED, env={"TERM": "xterm"})
    assert status == 1 and SGR.search(out), out[:300]


@pytest.mark.parametrize(
    "env",
    [{"NO_COLOR": "1", "TERM": "xterm"}, {"TERM": "dumb"}, {"FORCE_COLOR": "1", "NO_COLOR": "1", "TERM": "xterm"}],
    ids=["NO_COLOR", "TERM=dumb", "NO_COLOR-beats-FORCE_COLOR"],
)
@pytest.mark.parametrize("command", ["validate", "inspect", "branches", "tree", "context", "compact"])
def test_no_colour_on_a_terminal(command: str, env: dict[str, str]) -> None:
    extra = ["--dry-run"] if command == "compact" else []
    status, out = in_pty(command, SEED, *extra, env=env)
    assert status in (0, 1) and out, out[:300]
    assert not SGR.search(out), out[:300]


def test_color_never_beats_a_terminal_and_always_beats_a_pipe() -> None:
    status, out = in_pty("inspect", SEED, "--color", "never", env={"TERM": "xterm"})
    assert status == 0 and not SGR.search(out)
    piped = pitools("inspect", SEED, "--color", "always")
    assert piped.returncode == 0 and SGR.search(piped.stdout)
    # before the subcommand works too
    assert SGR.search(pitools("--color", "always", "inspect", SEED).stdout)


@pytest.mark.slow
def test_force_colour_in_a_pipe() -> None:
    r = pitools("validate", SEED, env={"FORCE_COLOR": "1"})
    assert r.returncode == 1 and SGR.search(r.stdout)
    assert not SGR.search(pitools("validate", SEED).stdout)
    # FORCE_COLOR asks for colour, not for a progress bar in a pipe
    many = pitools("validate", SEED, GEN, GOLDEN / "v2-hook-message" / "session.jsonl", env={"FORCE_COLOR": "1"})
    assert b"validating" not in many.stderr


def test_progress_on_a_terminal_only_and_erased_before_output() -> None:
    status, out = in_pty("inspect", GEN, "--format", "json", env={"TERM": "xterm", "PITOOLS_PROGRESS_DELAY": "0"})
    assert status == 0
    assert b"pitools inspect: working on session.jsonl" in out
    # erased (\r + erase line) before the data starts
    before, _, data = out.partition(b"{")
    assert before.endswith(b"\r\x1b[K") and json.loads(b"{" + data.replace(b"\r\n", b"\n"))
    piped = pitools("inspect", GEN, env={"PITOOLS_PROGRESS_DELAY": "0"})
    assert b"working on" not in piped.stderr and piped.stderr == b""


class _TerminalStream(io.StringIO):
    """A captured stream that says it is a terminal (as a run's stderr on a tty would)."""

    def isatty(self) -> bool:
        return True


def test_progress_goes_to_the_runs_stderr_not_the_process(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The spinner draws on the Output's stderr (its terminal flag, its safe text), so a run
    with its own streams (a test, a program embedding pitools) gets it and the process's
    stderr never sees it; a hostile file name shows up escaped."""
    from pitools.cli import Environment, main

    hostile = tmp_path / "evil\x1b]0;owned\x07\u202ename.jsonl"
    hostile.write_bytes(GEN.read_bytes())
    err = _TerminalStream()
    env = Environment(
        stdout=io.StringIO(),
        stderr=err,
        stdin=io.StringIO(),
        environ={"TERM": "xterm", "PITOOLS_PROGRESS_DELAY": "0", "PI_CODING_AGENT_DIR": str(tmp_path / "agent")},
    )
    assert main(["inspect", str(hostile), "--format", "json"], env) == 0
    shown = err.getvalue()
    assert "pitools inspect: working on evil" in shown
    assert shown.endswith("\r\x1b[K")  # erased before the data
    assert "\x1b" not in shown.replace("\x1b[K", "") and "\x07" not in shown and "\u202e" not in shown
    assert json.loads(env.stdout.getvalue())["lineCount"] == 579
    real = capfd.readouterr()
    assert real.err == "" and real.out == ""
    # TERM=dumb (the run's variables, not the process's) draws nothing
    dumb = _TerminalStream()
    env = Environment(stdout=io.StringIO(), stderr=dumb, environ={"TERM": "dumb", "PITOOLS_PROGRESS_DELAY": "0"})
    assert main(["inspect", str(GEN)], env) == 0 and dumb.getvalue() == ""
    assert capfd.readouterr().err == ""
    assert not [t for t in threading.enumerate() if t.name == "pitools-progress"]


# -- width ----------------------------------------------------------------------------------------


def _long_session(tmp_path: Path, entries: int = 40) -> Path:
    """A valid session with long messages, long paths and a long cwd (validate finds nothing)."""
    cwd = "/home/someone/" + "/".join(f"very-long-directory-name-{i}" for i in range(6))
    lines: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": "s-long", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}
    ]
    parent = None
    usage = {
        "input": 1000,
        "output": 50,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 1050,
        "cost": {"input": 0.003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00375},
    }
    for i in range(entries):
        path = f"{cwd}/src/module_{i}/a-rather-long-file-name-{i}.ts"
        if i % 2 == 0:
            messages = [{"role": "user", "content": f"request {i}: " + "please look at this " * 12, "timestamp": i}]
        else:
            messages = [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"reply {i} " + "with a long explanation " * 10},
                        {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": path}},
                    ],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": usage,
                    "stopReason": "toolUse",
                    "timestamp": i,
                },
                {
                    "role": "toolResult",
                    "toolCallId": f"c{i}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": f"contents of file {i}"}],
                    "isError": False,
                    "timestamp": i,
                },
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"done with {i}"}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": i,
                },
            ]
        for k, msg in enumerate(messages):
            eid = f"e{i:04d}" if k == 0 else f"e{i:04d}.{k}"
            lines.append(
                {
                    "type": "message",
                    "id": eid,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": msg,
                }
            )
            parent = eid
    file = tmp_path / "long.jsonl"
    file.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return file


def test_piped_branches_keeps_the_whole_preview(tmp_path: Path) -> None:
    file = _long_session(tmp_path)
    out = pitools("branches", file).stdout.decode()
    assert "please look at this please look at this please look at this" in out
    # previews are clipped by length with a visible marker, never by the (absent) width
    assert not any(line.endswith("…") for line in out.splitlines())
    assert all(line == line.rstrip() for line in out.splitlines())
    narrow = pitools("branches", file, "--width", "60").stdout.decode()
    assert max(len(line) for line in narrow.splitlines()) <= 60


def test_piped_compact_dry_run_keeps_paths_whole(tmp_path: Path) -> None:
    file = _long_session(tmp_path)
    out = pitools("compact", file, "--dry-run", "--keep-recent-tokens", "100").stdout.decode()
    paths = [line.strip() for line in out.splitlines() if line.strip().startswith("/home/someone/")]
    assert paths and all(p.endswith(".ts") for p in paths), out
    assert "['" not in out and "']" not in out  # no Python list repr
    assert all(line == line.rstrip() for line in out.splitlines())


def test_piped_inspect_has_no_trailing_spaces() -> None:
    out = pitools("inspect", GEN).stdout.decode()
    assert out and all(line == line.rstrip() for line in out.splitlines())


def test_piped_tree_and_context_are_not_cut(tmp_path: Path) -> None:
    file = _long_session(tmp_path)
    tree = pitools("tree", file).stdout.decode()
    assert "please look at this " * 5 in tree and "…" not in tree
    context = pitools("context", file).stdout.decode()
    assert "with a long explanation " * 4 in context


# -- locales --------------------------------------------------------------------------------------

LOCALES = {
    "C.UTF-8": {"LANG": "C.UTF-8", "LC_ALL": None, "PYTHONIOENCODING": None, "PYTHONUTF8": None},
    "C": {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": None, "PYTHONUTF8": None},
    "ascii": {"PYTHONIOENCODING": "ascii"},
    "latin-1": {"PYTHONIOENCODING": "latin-1"},
}


@pytest.fixture(scope="module")
def surrogate_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session whose messages hold a lone surrogate, CJK, emoji and accents (valid JSON; Pi reads it)."""
    folder = tmp_path_factory.mktemp("surrogate")
    file = folder / "s.jsonl"
    file.write_text(
        '{"type":"session","version":3,"id":"s\\ud800x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/r\\udfff"}\n'
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"lone \\ud800 here, 认证 ✓ café 🎉","timestamp":1}}\n'
        '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"ok \\udc80 认证"}],'
        '"provider":"p\\ud800","model":"m","timestamp":2}}\n'
        '{"type":"session_info","id":"n1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z",'
        '"name":"名前 \\ud800"}\n'
    )
    return file


READ_COMMANDS: list[list[str]] = [
    ["validate"],
    ["inspect"],
    ["context"],
    ["context", "--format", "markdown"],
    ["tree"],
    ["branches"],
    ["compact", "--dry-run"],
    ["export"],
    ["inspect", "--format", "json"],
]


@pytest.mark.parametrize("locale", list(LOCALES))
@pytest.mark.parametrize("command", READ_COMMANDS, ids=" ".join)
def test_no_locale_makes_printing_fail(surrogate_session: Path, locale: str, command: list[str]) -> None:
    r = pitools(command[0], surrogate_session, *command[1:], env=LOCALES[locale])
    assert r.returncode in (0, 1), r.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in r.stderr and b"Error" not in r.stderr, r.stderr
    assert r.stdout


def test_lone_surrogates_are_shown_escaped(surrogate_session: Path) -> None:
    out = pitools("context", surrogate_session, env=LOCALES["C.UTF-8"]).stdout.decode()
    assert "lone \\ud800 here" in out and "认证" in out
    ascii_out = pitools("context", surrogate_session, env=LOCALES["ascii"]).stdout
    assert ascii_out.isascii() and b"\\u8ba4" in ascii_out  # 认 escaped, never an error


# -- broken pipe ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 2 MB: every human and JSON view of it is larger than a pipe's buffer."""
    folder = tmp_path_factory.mktemp("big")
    return _long_session(folder, entries=3000)


PIPE_COMMANDS: list[list[str]] = [
    ["compact", "{f}", "--dry-run"],
    ["compact", "{f}", "--dry-run", "--format", "json"],
    ["context", "{f}"],
    ["context", "{f}", "--format", "json"],
    ["context", "{f}", "--format", "markdown"],
    ["inspect", "{f}"],
    ["inspect", "{f}", "--format", "json"],
    ["branches", "{f}"],
    ["branches", "{f}", "--format", "json"],
    ["tree", "{f}"],
    ["tree", "{f}", "--format", "json"],
    ["export", "{f}"],
    ["export", "{f}", "--format", "html"],
    ["export", "{f}", "--format", "jsonl"],
    ["validate", "{f}"],
    ["validate", "{f}", "--format", "json"],
    ["migrate", "{f}"],
    ["migrate", "{f}", "-o", "-"],
    ["ls", "--session-dir", "{d}"],
    ["ls", "--session-dir", "{d}", "--format", "json"],
    ["fork", "{f}", "--at", "e0002", "-o", "{d}/forked.jsonl"],
    ["clone", "{f}", "-o", "{d}/cloned.jsonl"],
]


def _argv(template: list[str], file: Path) -> list[str]:
    return [a.format(f=file, d=file.parent) for a in template]


@pytest.mark.parametrize("template", PIPE_COMMANDS, ids=" ".join)
def test_head_under_pipefail_exits_0(big_session: Path, template: list[str]) -> None:
    argv = _argv(template, big_session)
    for leftover in big_session.parent.glob("*ed.jsonl"):
        leftover.unlink()
    cmd = " ".join(["set -o pipefail;", sys.executable, "-m", "pitools", *argv, "| head -1 >/dev/null"])
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, env=_env(), timeout=120, check=False)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in r.stderr and b"Broken pipe" not in r.stderr


@pytest.mark.parametrize("template", PIPE_COMMANDS, ids=" ".join)
def test_a_pipe_closed_before_any_output_exits_0(big_session: Path, template: list[str]) -> None:
    # The deterministic version of `| head -1`: the reader is gone before the first write.
    argv = _argv(template, big_session)
    for leftover in big_session.parent.glob("*ed.jsonl"):
        leftover.unlink()
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pitools", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=_env(),
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert proc.stderr == b"" or b"pitools:" in proc.stderr, proc.stderr


# -- hostile session text -------------------------------------------------------------------------

EVIL = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[31mred\x1b[0m\u202eevil\u2066iso\u2069\x9b31m\x07bel\x08\r\u200f"


def _hostile(folder: Path) -> Path:
    def e(tag: str) -> str:
        return f"{tag}{EVIL}"

    header = {"type": "session", "version": 3, "id": "hostile-1", "timestamp": "2026-01-01T00:00:00.000Z"}
    header["cwd"] = e("/cwd")
    entries = [
        header,
        {"type": "model_change", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:00.500Z",
         "provider": e("prov"), "modelId": e("model")},
        {"type": "message", "id": "u1", "parentId": "m1", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": e("user text"), "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": e("thinking")},
             {"type": "text", "text": e("assistant text")},
             {"type": "toolCall", "id": "c1", "name": e("tool"), "arguments": {e("arg"): e("value")}}],
             "provider": e("prov"), "model": e("model"), "stopReason": "toolUse",
             "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
             "timestamp": 2}},
        {"type": "message", "id": "t1", "parentId": "a1", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": e("tool"),
                     "content": [{"type": "text", "text": e("result")}], "isError": False, "timestamp": 3}},
        {"type": "message", "id": "a2", "parentId": "t1", "timestamp": "2026-01-01T00:00:04.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": e("done")}],
                     "provider": e("prov"), "model": e("model"), "stopReason": "stop",
                     "usage": {"input": 20, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 25},
                     "timestamp": 4}},
        {"type": "label", "id": "l1", "parentId": "a2", "timestamp": "2026-01-01T00:00:05.000Z",
         "targetId": "u1", "label": e("label")},
        {"type": "session_info", "id": "n1", "parentId": "l1", "timestamp": "2026-01-01T00:00:06.000Z",
         "name": e("name")},
        {"type": "message", "id": "u2", "parentId": "n1", "timestamp": "2026-01-01T00:00:07.000Z",
         "message": {"role": "user", "content": e("second"), "timestamp": 5}},
        {"type": "message", "id": "a3", "parentId": "u2", "timestamp": "2026-01-01T00:00:08.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": e("last")}],
                     "provider": e("prov"), "model": e("model"), "stopReason": "stop",
                     "usage": {"input": 30, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 35},
                     "timestamp": 6}},
        # a second branch, so branches/tree show forks and previews
        {"type": "message", "id": "u3", "parentId": "a2", "timestamp": "2026-01-01T00:00:09.000Z",
         "message": {"role": "user", "content": e("other branch"), "timestamp": 7}},
    ]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "2026-01-01T00-00-00-000Z_hostile-1.jsonl"
    file.write_text("".join(json.dumps(x) + "\n" for x in entries))
    return file


HOSTILE_COMMANDS: list[list[str]] = [
    ["inspect", "{f}"],
    ["validate", "{f}"],
    ["validate", "{f}", "--format", "github"],
    ["context", "{f}"],
    ["context", "{f}", "--format", "markdown"],
    ["context", "{f}", "--leaf", "u3"],
    ["tree", "{f}"],
    ["tree", "{f}", "--filter", "all"],
    ["branches", "{f}"],
    ["compact", "{f}", "--dry-run", "--keep-recent-tokens", "1"],
    ["compact", "{f}", "--dry-run", "--keep-recent-tokens", "1", "--show-prompt"],
    ["navigate", "{f}", "--to", "u2"],
    ["navigate", "{f}", "--to", "u2", "--show-prompt", "--entries"],
    ["navigate", "{f}", "--leaf", "a3", "--to", "u1", "--summarize", "--model", "builtin", "-o", "{d}/out/nav.jsonl"],
    ["export", "{f}"],
    ["export", "{f}", "--all"],
    ["export", "{f}", "--format", "html"],
    ["migrate", "{f}"],
    ["ls", "--session-dir", "{d}"],
    ["ls", "--session-dir", "{d}", "--all"],
    ["fork", "{f}", "--at", "u2", "-o", "{d}/out/forked.jsonl"],
    ["clone", "{f}", "--leaf", "a3", "-o", "{d}/out/cloned.jsonl"],
]
HOSTILE_JSON: list[list[str]] = [
    ["inspect", "{f}", "--format", "json"],
    ["validate", "{f}", "--format", "json"],
    ["context", "{f}", "--format", "json"],
    ["tree", "{f}", "--format", "json"],
    ["branches", "{f}", "--format", "json"],
    ["compact", "{f}", "--dry-run", "--format", "json"],
    ["navigate", "{f}", "--to", "u2", "--format", "json"],
    ["ls", "--session-dir", "{d}", "--format", "json"],
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _hostile(tmp_path_factory.mktemp("hostile") / "sessions")


def _run_hostile(
    template: list[str], file: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    out = file.parent / "out"
    for leftover in out.glob("*.jsonl") if out.exists() else []:
        leftover.unlink()
    return pitools(*_argv(template, file), env=env)


@pytest.mark.parametrize("template", HOSTILE_COMMANDS, ids=" ".join)
@pytest.mark.parametrize("color", ["never", "always"])
def test_hostile_text_never_reaches_the_terminal_raw(hostile: Path, template: list[str], color: str) -> None:
    r = _run_hostile([*template, "--color", color], hostile)
    assert r.returncode in (0, 1), r.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in r.stderr
    for name, stream in (("stdout", r.stdout), ("stderr", r.stderr)):
        cleaned = SGR.sub(b"", stream) if color == "always" else stream
        found = RAW_CONTROL.search(cleaned)
        assert found is None, (
            f"raw {found.group()!r} on {name}: {stream[max(0, found.start() - 80) : found.end() + 40]!r}"
        )
    shown = r.stdout + r.stderr
    if template[0] not in ("migrate", "fork", "clone", "validate") and template[-1] != "{d}":
        assert b"\\x1b" in shown or b"\\u202e" in shown, shown[:400]  # visibly escaped, not dropped


@pytest.mark.parametrize("template", HOSTILE_JSON, ids=" ".join)
def test_hostile_json_is_exact_and_has_no_raw_c0(hostile: Path, template: list[str]) -> None:
    r = _run_hostile(template, hostile)
    assert r.returncode in (0, 1), r.stderr
    assert RAW_C0.search(r.stdout.rstrip(b"\n")) is None
    assert RAW_CONTROL.search(r.stderr) is None
    json.loads(r.stdout)  # exact, parseable
    if template[0] in ("context", "inspect"):
        assert "\\u001b]52;c;" in r.stdout.decode()  # JSON's own escape, value unchanged


def test_hostile_in_a_terminal(hostile: Path) -> None:
    status, out = in_pty("context", hostile, env={"TERM": "xterm"})
    assert status == 0
    assert not RAW_CONTROL.search(SGR.sub(b"", out).replace(b"\r\n", b"\n"))


# -- exit codes and option placement --------------------------------------------------------------


def test_the_int_a_command_returns_is_the_exit_status() -> None:
    assert pitools("validate", SEED).returncode == 1  # the command returns 1 (findings)
    assert pitools("validate", GEN).returncode == 0
    assert pitools("migrate", GOLDEN / "gen-s0006_v2" / "session.jsonl", "--check").returncode == 1


@pytest.mark.parametrize("where", ["before", "after"])
def test_output_options_before_or_after_the_subcommand(where: str) -> None:
    opts = ["--color", "never", "--width", "50", "--format", "json"]
    argv = [*opts, "inspect", SEED] if where == "before" else ["inspect", SEED, *opts]
    r = pitools(*argv)
    assert r.returncode == 0 and json.loads(r.stdout)["header"]["id"] == "S1"
    debug = ["--debug", "inspect", SEED] if where == "before" else ["inspect", SEED, "--debug"]
    assert pitools(*debug).returncode == 0


def test_a_bad_format_before_the_subcommand_is_a_usage_error() -> None:
    r = pitools("--format", "yaml", "inspect", SEED)
    assert r.returncode == 2 and b"--format" in r.stderr


def test_debug_after_the_subcommand_shows_the_traceback(tmp_path: Path) -> None:
    # A bug simulated through an import hook: --debug after the subcommand must reach the handler.
    hook = tmp_path / "sitecustomize.py"
    hook.write_text(
        "import pitools.core.context.build as b\n"
        "def boom(*a, **k):\n    raise ZeroDivisionError('simulated bug')\n"
        "b.replay_context = boom\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    plain = pitools("context", SEED, env=env)
    assert plain.returncode == 3 and b"Traceback" not in plain.stderr
    debug = pitools("context", SEED, "--debug", env=env)
    assert b"Traceback" in debug.stderr and b"ZeroDivisionError" in debug.stderr


# -- stdin ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["inspect"], ["context", "--format", "json"], ["tree"], ["branches"], ["compact", "--dry-run"], ["export"]],
)
def test_a_dash_reads_the_session_from_stdin(command: list[str]) -> None:
    data = SEED.read_bytes()
    piped = subprocess.run(
        [sys.executable, "-m", "pitools", command[0], "-", *command[1:]],
        input=data,
        capture_output=True,
        env=_env(),
        timeout=120,
        check=False,
    )
    direct = pitools(command[0], SEED, *command[1:])
    assert piped.returncode == direct.returncode == 0, piped.stderr
    if command[0] not in ("inspect", "export"):  # these name the file they read
        assert piped.stdout == direct.stdout


@pytest.mark.parametrize(
    "command",
    [["compact", "--apply", "--model", "builtin"], ["migrate", "--in-place"], ["clone"], ["fork", "--at", "U2"]],
)
def test_writing_commands_refuse_stdin_without_an_output(command: list[str]) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "pitools", command[0], "-", *command[1:]],
        input=SEED.read_bytes(),
        capture_output=True,
        env=_env(),
        timeout=120,
        check=False,
    )
    assert r.returncode == 2 and b"stdin" in r.stderr, r.stderr


# -- a full disk ------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_line_and_exit_1(tmp_path: Path) -> None:
    # Writing to /dev/full fails with ENOSPC: the machine refused the write, not a pitools bug,
    # on the click path, the click-free fast path (usage, ls) and the lean warm search alike.
    sessions = tmp_path / "agent" / "sessions" / "--work--"
    sessions.mkdir(parents=True)
    (sessions / "s.jsonl").write_bytes(SEED.read_bytes())
    env = {"PITOOLS_CACHE_DIR": str(tmp_path / "cache"), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    assert pitools("index", "--all", env=env).returncode == 0
    runs = [
        ("inspect", SEED),
        ("inspect", SEED, "--format", "json"),
        ("context", SEED),
        ("usage", "--format", "json"),
        ("ls", "--all"),
        ("search", "the", "--format", "json"),
    ]
    for args in runs:
        with open("/dev/full", "wb") as full:
            r = subprocess.run(
                [sys.executable, "-m", "pitools", *map(str, args)],
                stdout=full,
                stderr=subprocess.PIPE,
                env=_env(env),
                check=False,
                timeout=120,
            )
        assert r.returncode == 1, (args, r.stderr)
        assert r.stderr == b"pitools: cannot write the output: No space left on device\n", (args, r.stderr)
