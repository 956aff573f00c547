"""``pitools ls`` on a private Pi agent directory holding copies of golden sessions."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"
SCHEMA = json.loads((ROOT / "schemas" / "output" / "ls.schema.json").read_text())

Run = Callable[..., Result]  # the `run` fixture of tests/cli/conftest.py


@pytest.fixture
def pi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Agent dir with three sessions for the project and one elsewhere; cwd is the project."""
    project = tmp_path / "projects" / "app"
    agent = tmp_path / "agent"
    here = support.pi_project(tmp_path, monkeypatch, project, agent)
    monkeypatch.setenv("PITOOLS_WIDTH", "160")
    copies = {
        "seed": ("seed-running-example", here / "2026-07-29T09-00-00-000Z_S1.jsonl"),
        "big": ("gen-s0000_v3", here / "2025-10-09T22-34-34-000Z_445e9686.jsonl"),
        "old": ("v1-compaction-by-index", here / "2025-01-01T00-00-00-000Z_old.jsonl"),
        "other": ("gen-s0003_v3", agent / "sessions" / "--elsewhere--" / "2025-01-02T00-00-00-000Z_x.jsonl"),
    }
    for case, target in copies.values():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((GOLDEN / case / "session.jsonl").read_bytes())
    return {"dir": here, "project": project, "agent": agent, "files": {k: v[1] for k, v in copies.items()}}


def _validate(data: Any) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(data)


def test_human_listing(run: Run, pi_home: dict[str, Any]) -> None:
    out = run("ls").stdout
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["activity", "id", "name"]
    assert "检查认证实现" in lines[1]  # the newest activity first (2026-07-29)
    assert lines[2].startswith("M ")  # the v1 session (2026-03-01) needs migration
    assert "445e9686" in lines[3]  # 2025-10-10
    assert "3 sessions (sessions for " in out and str(pi_home["dir"]) in out.replace("\n", "")
    assert "M  needs migration" in out


def test_human_listing_shows_paths(run: Run, pi_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The path column: whole paths in a pipe, home as `~`, cut at the start on a narrow width."""
    monkeypatch.delenv("PITOOLS_WIDTH")
    lines = run("ls").stdout.splitlines()
    assert lines[0].split()[-1] == "path"
    assert lines[1].endswith(" " + str(pi_home["files"]["seed"]))  # not under HOME: as it is
    monkeypatch.setenv("HOME", str(pi_home["agent"].parent))
    tilde = "~" + str(pi_home["files"]["seed"])[len(str(pi_home["agent"].parent)) :]
    assert tilde.startswith("~/agent/sessions/")
    assert run("ls").stdout.splitlines()[1].endswith(" " + tilde)
    wide = run("ls", "--width", "200").stdout.splitlines()
    # Every line fits but the command resuming the first row in Pi, which is never cut.
    assert wide[-1] == "  pi --session " + str(pi_home["files"]["seed"])
    wide = wide[:-1]
    assert wide[1].endswith("…" + tilde[-59:]) and max(len(line) for line in wide if "jsonl" in line) <= 200
    narrow = run("ls", "--width", "100").stdout.splitlines()
    assert "path" not in narrow[0] and not any("jsonl" in line for line in narrow[:-1])


def test_path_column_is_safe_text(run: Run, pi_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    evil = pi_home["dir"] / "2026-08-01T00-00-00-000Z_\x1b]0;owned\x07\u202e.jsonl"
    evil.write_bytes((GOLDEN / "seed-running-example" / "session.jsonl").read_bytes())
    monkeypatch.delenv("PITOOLS_WIDTH")  # a pipe: the whole path
    out = run("ls").stdout
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "_\\x1b]0;owned\\x07\\u202e.jsonl" in out


def test_render_display_path() -> None:
    from pitools.render.ls import display_path

    assert display_path("/home/ann/.pi/agent/sessions/a.jsonl", "/home/ann") == "~/.pi/agent/sessions/a.jsonl"
    assert display_path("/home/ann/x", "/home/ann/") == "~/x"
    assert display_path("/home/annex/x", "/home/ann") == "/home/annex/x"  # not a folder boundary
    assert display_path("/srv/x", "/") == "/srv/x"  # a root home shortens nothing
    assert display_path("/a/b\nc\td\x1b", "/h") == "/a/b\\x0ac\\x09d\\x1b"


def test_json_listing_matches_schema(run: Run, pi_home: dict[str, Any]) -> None:
    data = json.loads(run("ls", "--format", "json").stdout)
    _validate(data)
    assert data["count"] == 3 and data["sessionDirSource"] == "default"
    seed = data["sessions"][0]
    assert (seed["id"], seed["entryCount"], seed["leafCount"], seed["status"]) == ("S1", 14, 2, "ok")
    assert data["sessions"][1]["status"] == "needs-migration"
    big = data["sessions"][2]
    assert big["tokens"]["total"] > 0 and big["cost"] > 0 and big["models"]


def test_all_cwd_and_session_dir(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    everything = json.loads(run("ls", "--all", "--format", "json").stdout)
    _validate(everything)
    assert everything["count"] == 4 and len(everything["folders"]) == 2
    assert "cwd" in run("ls", "--all").stdout.splitlines()[0]
    elsewhere = json.loads(run("ls", "--cwd", "/elsewhere", "--format", "json").stdout)
    assert elsewhere["count"] == 1 and elsewhere["sessions"][0]["path"].endswith("_x.jsonl")
    empty = tmp_path / "empty"
    result = run("ls", "--session-dir", str(empty))
    assert result.stdout.startswith("0 sessions") and "[--session-dir]" in result.stdout
    _validate(json.loads(run("ls", "--session-dir", str(empty), "--format", "json").stdout))


def test_env_session_dir_and_no_cache(run: Run, pi_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(pi_home["dir"]))
    data = json.loads(run("ls", "--no-cache", "--format", "json").stdout)
    assert data["sessionDirSource"] == "PI_CODING_AGENT_SESSION_DIR"
    # A configured folder that is the default one for this cwd: no header-cwd filtering.
    assert data["count"] == 3
    assert not Path(os.environ["PITOOLS_CACHE_DIR"]).exists()


def test_help_is_documented(run: Run) -> None:
    out = run("ls", "--help").stdout
    for flag in ("--all", "--cwd", "--session-dir", "--format", "--no-cache"):
        assert flag in out


def test_limit_since_and_sort(run: Run, pi_home: dict[str, Any]) -> None:
    def ids(*args: str) -> list[str]:
        data = json.loads(run("ls", "--format", "json", *args).stdout)
        _validate(data)
        assert data["count"] == len(data["sessions"])
        return [s["path"].rsplit("_", 1)[1] for s in data["sessions"]]

    everything = ids()
    assert len(everything) == 3
    assert ids("--limit", "1") == everything[:1]
    assert ids("--since", "2026-01-01") == [i for i in everything if i != "445e9686.jsonl"]
    assert ids("--since", "1d") == []  # nothing was active in the last day (the sessions are old)
    by_size = ids("--sort", "size")
    sizes = {f.name.rsplit("_", 1)[1]: f.stat().st_size for f in pi_home["files"].values()}
    assert by_size == sorted(by_size, key=lambda i: -sizes[i])
    assert "neither a date" in run("ls", "--since", "yesterday-ish", exit_code=2).stderr
