"""Back into Pi: the command resuming a session (or an entry) that ``ls``, ``inspect`` and
``search`` show, the id prefixes ``ls`` prints, and listing previews that mask secrets.

The command form is Pi 1.6.0's own: ``pi --session <path|id>`` (``dist/cli/args.js``); an argument
holding a ``/`` is opened as a file (``resolveSessionPath`` in ``dist/main.js``). The commands are
run here by a POSIX shell with ``pi`` and ``pitools`` replaced by functions that print their
arguments: a hostile file name must reach them as one word and run nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests import support

Run = Callable[..., Result]

#: A Perplexity key shape `scan` reports (perplexity-key); made up, not a real key.
PPLX = "pplx-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB2dF4hJ6kL8nP0r"
#: A file name a shell would act on if it were pasted unquoted.
HOSTILE = "2026-12-07T09-00-00-000Z_it's $(touch owned); `id` x.jsonl"


def _usage() -> dict[str, Any]:
    cost = {"input": 0.1, "output": 0.1, "cacheRead": 0, "cacheWrite": 0, "total": 0.2}
    return {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15, "cost": cost}


def write_session(path: Path, sid: str, first: str, ts: str) -> None:
    """u1 -> a1 -> u2 -> a2 (the default leaf) and a side branch a1 -> b1."""

    def assistant(eid: str, parent: str, text: str) -> dict[str, Any]:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": _usage(),
            "stopReason": "stop",
            "timestamp": 2,
        }
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}

    def user(eid: str, parent: str | None, text: str) -> dict[str, Any]:
        message = {"role": "user", "content": text, "timestamp": 1}
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}

    lines = [
        {"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": str(path.parent)},
        user("u1", None, first),
        assistant("a1", "u1", "first otter answer"),
        assistant("b1", "u1", "side otter branch"),
        user("u2", "a1", "second question"),
        assistant("a2", "u2", "last otter answer"),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture
def pi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Three sessions for the project: two whose ids share their first 8 characters (made a second
    apart), one with a key in its first message, one under a hostile file name."""
    project = tmp_path / "proj"
    here = support.pi_project(tmp_path, monkeypatch, project)
    monkeypatch.delenv("PITOOLS_WIDTH", raising=False)
    files = {
        "a": here / "2026-12-07T10-00-00-000Z_01a249d3-aaaa.jsonl",
        "b": here / "2026-12-07T10-00-01-000Z_01a249d3-bbbb.jsonl",
        "evil": here / HOSTILE,
    }
    write_session(files["a"], "01a249d3-aaaa-7000-8000-000000000001", f"use {PPLX} please", "2026-12-07T10:00:00.000Z")
    write_session(files["b"], "01a249d3-bbbb-7000-8000-000000000002", "x " * 400, "2026-12-07T10:00:01.000Z")
    write_session(files["evil"], "9f00aa11-cccc-7000-8000-000000000003", "hostile", "2026-12-07T09:00:00.000Z")
    return {"dir": here, "files": files, "project": project}


def shell_words(command: str, cwd: Path) -> list[list[str]]:
    """The argument lists ``pi`` and ``pitools`` get when a POSIX shell runs ``command`` (both
    replaced by functions; ``pitools`` prints a fixed path, as ``clone`` prints the new file's)."""
    sh = shutil.which("sh")
    assert sh is not None
    script = (
        "pi() { printf 'pi'; printf '\\037%s' \"$@\"; printf '\\036'; }\n"
        "pitools() { printf 'pitools' >&2; printf '\\037%s' \"$@\" >&2; printf '\\036' >&2; echo /new/clone.jsonl; }\n"
        + command
    )
    done = subprocess.run([sh, "-c", script], cwd=cwd, capture_output=True, text=True, check=True, timeout=30)
    calls = [c.split("\x1f") for c in (done.stderr + done.stdout).split("\x1e") if c]
    assert not (cwd / "owned").exists()
    return calls


def test_ls_prints_unique_id_prefixes(run: Run, pi_home: dict[str, Any]) -> None:
    lines = run("ls", "--width", "120").stdout.splitlines()
    ids = {line.split()[1] for line in lines[1:4]}
    assert ids == {"01a249d3-a", "01a249d3-b", "9f00aa11"}
    # Each prefix names one session: inspect finds it (8 characters alone are ambiguous).
    run("inspect", "01a249d3", exit_code=1)
    data = json.loads(run("inspect", "01a249d3-a", "--format", "json").stdout)
    assert data["path"].endswith("01a249d3-aaaa.jsonl")
    # Unique among every session found, not only those --limit keeps.
    assert run("ls", "--limit", "1").stdout.splitlines()[1].split()[1] == "01a249d3-b"


def test_ls_previews_mask_secrets_in_every_format(run: Run, pi_home: dict[str, Any]) -> None:
    human = run("ls").stdout
    tsv = run("ls", "--format", "tsv").stdout
    data = json.loads(run("ls", "--format", "json").stdout)
    for out in (human, tsv, json.dumps(data)):
        assert PPLX not in out and PPLX[5:25] not in out
    first = {s["id"][:10]: s["firstMessage"] for s in data["sessions"]}["01a249d3-a"]
    assert first == "use [perplexity-key pplx… (45 chars)] please"
    assert "use [perplexity-key pplx… (45 chars)] please" in tsv
    # scan still reports the key: the file is untouched.
    assert PPLX in pi_home["files"]["a"].read_text()


def test_ls_in_a_pipe_pads_no_name_to_the_longest(run: Run, pi_home: dict[str, Any]) -> None:
    lines = run("ls").stdout.splitlines()
    header = lines[0]
    # The name column is a preview: at most 60 cells wide in a pipe (800 characters of it here).
    assert header.index("msgs") - header.index("name / first message") <= 62
    row = next(line for line in lines if "01a249d3-b" in line)
    assert "x x x" in row and "…" in row and len(row) < 400
    assert not any(line.endswith(" ") for line in lines)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_ls_footer_fits_the_width(run: Run, pi_home: dict[str, Any], width: int) -> None:
    lines = run("ls", "--all", "--width", str(width)).stdout.splitlines()
    command = lines[-1]
    # Every line fits, but the command resuming the first row, which is never cut or wrapped.
    assert all(len(line) <= width for line in lines[:-1])
    assert command == f"  pi --session {pi_home['files']['b']}"
    assert any("sessions (all sessions) in" in line for line in lines)


def test_ls_resume_command_runs_as_pi_expects(run: Run, pi_home: dict[str, Any]) -> None:
    command = run("ls").stdout.splitlines()[-1].strip()
    assert shell_words(command, pi_home["project"]) == [["pi", "--session", str(pi_home["files"]["b"])]]


def test_inspect_shows_the_resume_commands(run: Run, pi_home: dict[str, Any]) -> None:
    evil = pi_home["files"]["evil"]
    data = json.loads(run("inspect", evil, "--format", "json").stdout)
    assert data["defaultLeaf"] == "a2"
    resume = data["resume"]
    assert set(resume["leaves"]) == {"a2", "b1"}
    assert shell_words(resume["session"], pi_home["project"]) == [["pi", "--session", str(evil)]]
    assert resume["leaves"]["a2"] == resume["session"]
    # Another leaf: cloned first (pitools clone PATH --leaf ID prints the new file), then opened.
    assert shell_words(resume["leaves"]["b1"], pi_home["project"]) == [
        ["pitools", "clone", str(evil), "--leaf", "b1"],
        ["pi", "--session", "/new/clone.jsonl"],
    ]
    human = run("inspect", evil, "--width", "80").stdout
    assert f"resume in Pi: {resume['session']}\n" in human
    assert f"at leaf b1: {resume['leaves']['b1']}\n" in human


def test_inspect_relative_path_stays_a_path(run: Run, pi_home: dict[str, Any]) -> None:
    """Pi reads an argument without a / as a session id: a bare file name gets ./ in front."""
    local = pi_home["project"] / "s.jsonl"
    shutil.copy(pi_home["files"]["a"], local)
    data = json.loads(run("inspect", "s.jsonl", "--format", "json").stdout)
    assert data["resume"]["session"] == "pi --session ./s.jsonl"


def test_stdin_session_has_no_resume_command(run: Run, pi_home: dict[str, Any]) -> None:
    data = json.loads(run("inspect", "-", "--format", "json", input=pi_home["files"]["a"].read_text()).stdout)
    assert "resume" not in data


def test_search_hit_resumes_at_its_entry(run: Run, pi_home: dict[str, Any]) -> None:
    data = json.loads(run("search", "otter", "--format", "json").stdout)
    hits = {(Path(h["session"]["path"]).name, h["entryId"]): h for h in data["hits"]}
    evil = str(pi_home["files"]["evil"])
    leaf = hits[(HOSTILE, "a2")]["commands"][-1]
    assert shell_words(leaf, pi_home["project"]) == [["pi", "--session", evil]]
    side = hits[(HOSTILE, "b1")]["commands"][-1]
    assert shell_words(side, pi_home["project"]) == [
        ["pitools", "clone", evil, "--leaf", "b1"],
        ["pi", "--session", "/new/clone.jsonl"],
    ]
    human = run("search", "side otter").stdout
    assert "pi --session \"$(pitools clone '" in human


@pytest.mark.parametrize("width", [80, 100, 120])
def test_search_headers_fit_the_width(run: Run, pi_home: dict[str, Any], width: int) -> None:
    out = run("search", "otter", "--width", str(width)).stdout
    headers = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert len(headers) == 4  # three sessions and the count
    assert all(len(line) <= width for line in headers)
    assert all(line.endswith(".jsonl") or "hit" in line for line in headers[:3])
    # The commands are whole (a terminal wraps them; copying gets the one command).
    assert f"    pi --session {pi_home['files']['a']}\n" in out


def test_usage_by_session_masks_names_and_tells_ids_apart(run: Run, pi_home: dict[str, Any]) -> None:
    named = pi_home["dir"] / "2026-12-07T08-00-00-000Z_7e000000.jsonl"
    write_session(named, "7e000000-dddd-7000-8000-000000000004", "hello", "2026-12-07T08:00:00.000Z")
    info = {"type": "session_info", "id": "n1", "parentId": "a2", "timestamp": "2026-12-07T08:00:00.000Z"}
    with named.open("a") as f:
        f.write(json.dumps({**info, "name": f"deploy with {PPLX}"}) + "\n")
    out = run("usage", "--by", "session", "--width", "120").stdout
    assert PPLX not in out and PPLX[5:25] not in out
    assert "7e000000 deploy with [perplexity-key pplx" in out  # the column is cut at 48
    keys = [line.split()[0] for line in out.splitlines()[1:5]]
    assert sorted(keys) == ["01a249d3-a", "01a249d3-b", "7e000000", "9f00aa11"]
    # The serve list shows what `ls --format json` gives: the same masked previews.
    data = json.loads(run("ls", "--format", "json").stdout)
    names = [s["name"] for s in data["sessions"] if s.get("name")]
    assert names == ["deploy with [perplexity-key pplx… (45 chars)]"]


def test_previews_with_a_lone_surrogate_are_masked_too(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    """A JSON \\ud83d escape without its pair reaches the detector as a lone surrogate: it used to
    stop `scan` with an internal error (UTF-8 regular expressions cannot take it)."""
    odd = pi_home["dir"] / "2026-12-07T07-00-00-000Z_5a000000.jsonl"
    write_session(odd, "5a000000-eeee-7000-8000-000000000005", f"\ud83d key {PPLX}", "2026-12-07T07:00:00.000Z")
    data = json.loads(run("ls", "--format", "json").stdout)
    first = next(s["firstMessage"] for s in data["sessions"] if s["id"].startswith("5a"))
    assert first == "\ud83d key [perplexity-key pplx… (45 chars)]"
    assert PPLX not in run("ls").stdout
    found = run("scan", odd, "--format", "json", exit_code=1).stdout
    assert '"perplexity-key"' in found and PPLX not in found


def test_serve_list_previews_are_masked(pi_home: dict[str, Any]) -> None:
    """The serve home page lists what /api/ls gives: the masked first message."""
    import urllib.request

    from tests import support

    with support.serving(pi_home["dir"]) as app:
        req = urllib.request.Request(app.url("/api/ls"))
        req.add_header("Cookie", f"{app.cookie}={app.token}")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=30) as resp:
            body = resp.read().decode("utf-8")
    assert PPLX not in body and PPLX[5:25] not in body
    firsts = [s["firstMessage"] for s in json.loads(body)["sessions"]]
    assert "use [perplexity-key pplx… (45 chars)] please" in firsts


def test_a_warm_ls_does_not_load_the_detector(pi_home: dict[str, Any]) -> None:
    """Previews are masked once, when the index summarises a file: listing again reads them
    masked from the index (the detector's ~80 regular expressions cost ~30 ms of CPU to load)."""
    import os
    import sys

    probe = (
        "import sys; from pitools.cli import main; status = main(sys.argv[1:]); "
        "print(status, 'pitools.core.secrets.detect' in sys.modules, file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PITOOLS_WIDTH"}

    def run_ls(*args: str) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", probe, "ls", *args],
            cwd=pi_home["project"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.stdout, done.stderr.strip().splitlines()[-1]

    cold, loaded = run_ls()
    assert loaded.startswith("0 ") and PPLX not in cold  # the index summarised (and masked) every file
    warm, loaded = run_ls()
    assert loaded == "0 False" and warm == cold
    warm_json, loaded = run_ls("--format", "json")
    assert loaded == "0 False" and PPLX not in warm_json


def test_a_huge_hostile_id_does_not_widen_ls(run: Run, pi_home: dict[str, Any]) -> None:
    """Two ids that differ only after 5,000 characters: no prefix shorter than that is unique;
    the column still stops at 36 cells (cut with …) and nothing raw reaches the terminal."""
    for n, end in enumerate("gh"):
        huge = pi_home["dir"] / f"2026-12-07T06-00-0{n}-000Z_huge.jsonl"
        write_session(huge, "\x1b[31m" + "f" * 5000 + end, "hello", f"2026-12-07T06:00:0{n}.000Z")
    lines = run("ls").stdout.splitlines()
    rows = [line for line in lines if "hello" in line]
    assert len(rows) == 2
    for row in rows:
        assert "\x1b" not in row
        cell = row.split()[1]
        assert cell.startswith("\\x1b[31mfff") and cell.endswith("…") and len(cell) == 36
    assert all(len(line) < 1000 for line in lines[:-1]), [len(x) for x in lines]  # the id alone is 5,000
