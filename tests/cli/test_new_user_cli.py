"""Issue 28: what a new user tripped on. One vocabulary for FILE, numbers and forks; clear exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import support

SAMPLE = support.ROOT / "examples" / "sample-session.jsonl"
SAMPLE_ID = "0195f2a4-7c1e-7b3a-9d20-5e6f8a1b2c3d"


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Pi agent folder holding the sample as a session of the current directory; returns its file."""
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("PITOOLS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "agent" / "sessions" / ("--" + str(project).strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    target = folder / f"2026-03-14T09-30-00-000Z_{SAMPLE_ID}.jsonl"
    target.write_text(json.dumps(header, separators=(",", ":")) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return target


# -- every command that takes FILE takes an id or id prefix the same way ---------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "{ref}"],
        ["scan", "{ref}"],
        ["repair", "{ref}", "--dry-run"],
        ["slim", "{ref}", "--images", "--dry-run"],
        ["redact", "{ref}", "-o", "{tmp}/redacted.jsonl"],
        ["dataset", "{ref}", "-o", "{tmp}/ds", "--format", "jsonl"],
        ["inspect", "{ref}"],
    ],
)
@pytest.mark.parametrize("ref", [SAMPLE_ID, SAMPLE_ID[:8]])
def test_every_file_command_takes_a_session_id_or_prefix(run, agent: Path, tmp_path: Path, args, ref) -> None:
    argv = [a.format(ref=ref, tmp=tmp_path) for a in args]
    r = run(*argv)
    assert str(agent) in r.stderr and "matched by id" in r.stderr


@pytest.mark.parametrize("command", ["validate", "scan", "repair", "slim", "redact", "inspect"])
def test_an_unknown_reference_is_one_line_naming_where_pitools_looked(run, agent: Path, command: str) -> None:
    extra = {"slim": ["--images"], "redact": ["-o", "x.jsonl"]}.get(command, [])
    r = run(command, "zzzz-nothing", *extra, exit_code=1)
    assert r.stderr.startswith("pitools: no session file, session id or id prefix matches 'zzzz-nothing'")
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args", [["repair", "-", "--in-place"], ["slim", "-", "--images", "--in-place"], ["redact", "-", "--in-place"]]
)
def test_writers_refuse_in_place_on_stdin(run, args) -> None:
    r = run(*args, input=SAMPLE.read_bytes(), exit_code=2)
    assert "stdin" in r.stderr


def test_validate_and_scan_still_take_folders_and_paths(run, agent: Path) -> None:
    assert run("validate", agent.parent).stdout.startswith("1 file checked")
    assert run("scan", str(agent)).stdout.startswith("1 file scanned")
