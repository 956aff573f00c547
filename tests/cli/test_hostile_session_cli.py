"""Attacks by session content and special files, each reproduced through the CLI (issue 12)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Run
from tests.fuzz.markdown_check import shape
from tests.unit.js.test_json_parse import DEPTH, HEADER, hidden_message

CUSTOM = (
    '{"type":"custom","id":"c1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"x","data":DATA}'
)


def test_a_deeply_nested_entry_reaches_pitools_context(tmp_path: Path, run: Run) -> None:
    # Node's JSON.parse reads any depth, so Pi sends this message to the model: so must we.
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + hidden_message(DEPTH) + "\n")
    assert "hidden from pitools?" in run("context", p, "--format", "json").stdout
    assert "hidden from pitools?" in run("context", p, "--format", "markdown").stdout
    run("validate", p)  # no malformed-json finding: the file is clean


@pytest.mark.parametrize("depth", [8_000, 19_500])
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_export_of_deep_nesting_stays_linear(tmp_path: Path, run: Run, depth: int, fmt: str) -> None:
    # json.dumps(indent=2) made a 16 KB custom entry nested 8,000 deep into 128 MB of Markdown.
    deep = '{"a":' * depth + "1" + "}" * depth
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + CUSTOM.replace("DATA", deep) + "\n")
    out = tmp_path / f"out.{fmt}"
    run("export", p, "--format", fmt, "-o", out)
    size = out.stat().st_size
    assert size < 20 * p.stat().st_size + 50_000, size
    text = out.read_text()
    # Markdown shows it indented; the HTML viewer embeds the line as it is (JSON.parse reads any depth).
    assert '"a": {' in text or '{"a":{"a":{' in text


# -- Markdown injection ---------------------------------------------------------------------------


def _hostile_markdown_session(path: Path) -> Path:
    """The attacks of issue 12, one per field."""
    asst_usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    values = [
        {
            "type": "session",
            "version": 3,
            "id": "s\n### User",
            "timestamp": "<img src=x onerror=alert(1)>",
            "cwd": "/repo\r# Injected cwd heading `x`",
        },
        {
            "type": "session_info",
            "id": "n1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "name": "Nice name\n### User\n[click me](javascript:alert(1))",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": "n1",
            "timestamp": "<img src=x onerror=alert(2)>",
            "message": {
                "role": "user",
                "timestamp": 1,
                "content": [
                    {"type": "text", "text": "### User\nfake turn\n<script>alert(3)</script>"},
                    {"type": "image", "mimeType": "image/png\n", "data": "iVBORw0KGgo="},
                ],
            },
        },
        {
            "type": "label",
            "id": "l1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "targetId": "u1",
            "label": "x\n\n## Label heading\n[a](javascript:alert(4))",
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "l1",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {
                "role": "assistant",
                "api": "x",
                "provider": "p\n### P",
                "model": "m",
                "stopReason": "stop\n### Stop",
                "usage": asst_usage,
                "timestamp": 2,
                "content": [
                    {"type": "thinking", "thinking": "</details>\n\n### Thinking heading\n<b>x</b>"},
                    {"type": "text", "text": "```\n### Out of the fence\n```"},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "`x` ``` [l](javascript:y)",
                        "arguments": {"k": "````\n### Args"},
                    },
                ],
            },
        },
        {
            "type": "custom_message",
            "id": "c1",
            "parentId": "a1",
            "timestamp": "2026-01-01T00:00:04.000Z",
            "customType": "t\n### Custom",
            "content": "body",
            "display": True,
        },
    ]
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


@pytest.mark.parametrize("command", ["export", "context"])
def test_markdown_output_keeps_session_text_inert(tmp_path: Path, run: Run, command: str) -> None:
    p = _hostile_markdown_session(tmp_path / "s.jsonl")
    out = run(command, p, "--format", "markdown").stdout
    found = shape(out)
    assert found.problems == []
    assert found.headings.get(1) == 1
    assert set(found.headings) <= {1, 3}
    # export: user, assistant, custom message (the name is an inline line); context: 3 messages.
    assert found.headings[3] == 3, found.heading_texts
    assert "image/png\n" not in out


def test_mime_type_with_a_trailing_newline_is_not_embedded(tmp_path: Path, run: Run) -> None:
    p = _hostile_markdown_session(tmp_path / "s.jsonl")
    out = run("export", p, "--format", "markdown", "--images", "embed").stdout
    assert "data:image" not in out
    assert shape(out).problems == []


# -- special files ------------------------------------------------------------------------------

SEED = Path(__file__).resolve().parents[2] / "golden" / "seed-running-example" / "session.jsonl"


def _pitools(
    *args: str, stdin: Any = None, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """A real process with a timeout: a hang fails the test instead of blocking it."""
    return subprocess.run(
        [sys.executable, "-m", "pitools", *args],
        stdin=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.fixture
def folder_with_fifo(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    lines = SEED.read_text().splitlines(keepends=True)
    header = json.loads(lines[0]) | {"cwd": str(tmp_path)}
    (folder / "2026-01-01T00-00-00-000Z_S1.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    os.mkfifo(folder / "2099-01-01T00-00-00-000Z_fifo.jsonl")  # newest by name and mtime
    return folder


@pytest.mark.parametrize("ref", [None, "S1", "S"])
def test_a_fifo_in_the_sessions_folder_is_skipped(folder_with_fifo: Path, ref: str | None) -> None:
    # Before: inspect with no FILE, or an id lookup, opened the FIFO and waited for a writer forever.
    args = ["inspect", "--session-dir", str(folder_with_fifo), "--format", "json"]
    env = {"PI_CODING_AGENT_DIR": str(folder_with_fifo.parent)}
    proc = _pitools(*args, *([ref] if ref else []), env=env, cwd=folder_with_fifo.parent)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["header"]["id"] == "S1"


def test_a_pipe_is_read_as_a_stream(tmp_path: Path) -> None:
    # `cat s | pitools inspect /dev/stdin` used to report "file is empty" (a pipe's size is 0).
    for command in (["inspect", "--format", "json"], ["validate", "--format", "json"], ["context", "--format", "json"]):
        with open(SEED, "rb") as fh:
            proc = _pitools(command[0], "/dev/stdin", *command[1:], stdin=fh)
        assert proc.returncode in (0, 1), proc.stderr
        assert "empty" not in proc.stdout + proc.stderr
        if command[0] == "inspect":
            assert json.loads(proc.stdout)["lineCount"] == len(SEED.read_bytes().splitlines())
        if command[0] == "context":
            assert json.loads(proc.stdout)["leafId"] == "C1"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for process substitution")
def test_process_substitution_is_read_as_a_stream() -> None:
    script = f'"{sys.executable}" -m pitools inspect <(cat "{SEED}") --format json'
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["header"]["id"] == "S1"


def test_an_empty_pipe_is_still_an_empty_file() -> None:
    proc = _pitools("validate", "/dev/stdin", stdin=subprocess.DEVNULL)
    # empty-file is info (Pi writes a fresh header into an empty file: tests/unit/validate/test_grades.py)
    assert proc.returncode == 0
    assert "info empty-file" in proc.stdout


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_migrate_in_place_refuses_non_regular_files(tmp_path: Path, target: str) -> None:
    # Before: `migrate --in-place /dev/zero` hashed /dev/zero forever.
    if target == "fifo":
        target = str(tmp_path / "f.jsonl")
        os.mkfifo(target)
    proc = _pitools("migrate", "--in-place", target)
    assert proc.returncode == 1
    assert "not a regular file" in proc.stderr
    assert proc.stderr.count("\n") == 1


_DEEP_100K = '{"a":' * DEPTH + "1" + "}" * DEPTH
_DEEP_PLACES = {
    "id": '{"type":"message","id":DEEP,"parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"user","content":"x","timestamp":1}}',
    "label": '{"type":"label","id":"l1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","targetId":"l1",'
    '"label":DEEP}',
    "tool-arguments": '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"assistant","stopReason":"toolUse","timestamp":1,'
    '"content":[{"type":"toolCall","id":"c1","name":"read","arguments":DEEP}]}}',
}


@pytest.mark.parametrize("place", sorted(_DEEP_PLACES))
@pytest.mark.parametrize(
    "command",
    [["inspect"], ["validate"], ["context"], ["context", "--format", "json"], ["branches"], ["tree"]],
    ids=" ".join,
)
def test_values_deeper_than_pitools_can_walk_end_in_one_clean_line(
    tmp_path: Path, run: Run, place: str, command: list[str]
) -> None:
    # Now that such lines are read (as Pi reads them), a command that walks the value recursively
    # stops with exit 1 and one line saying so, never an internal error.
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + _DEEP_PLACES[place].replace("DEEP", _DEEP_100K) + "\n")
    result = run(command[0], p, *command[1:], exit_code=None)
    assert result.exit_code in (0, 1), result.stderr
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith("pitools: ") for line in lines) and len(lines) <= 1, result.stderr


def test_validate_reports_pis_stack_overflow_on_deep_tool_arguments(tmp_path: Path, run: Run) -> None:
    # Pi 1.6.0 throws RangeError (Maximum call stack size exceeded) estimating tokens for tool
    # arguments nested 4,114 levels or more (scripts/pi_probe_deep.mjs); validate used to report its
    # own RecursionError as an internal error instead (the threshold: tests/unit/validate/test_deep_stringify.py).
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + _DEEP_PLACES["tool-arguments"].replace("DEEP", _DEEP_100K) + "\n")
    out = run("validate", "-j", "1", p, exit_code=1).stdout
    assert "internal-check-error" not in out
    assert "pi-would-crash" in out and "RangeError: Maximum call stack size exceeded in estimateTokens" in out
    assert out.count("Maximum call stack") == 1, out
