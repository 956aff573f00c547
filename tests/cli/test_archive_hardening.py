"""The archive commands against hostile input (issue 27): regex bombs, a damaged index, lineage
loops, in-place edits that keep size and mtime."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.archive_gen import Archive, env_for

Run = Callable[..., Result]


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Archive:
    env = env_for(tmp_path / "agent", tmp_path / "cache", tmp_path / "home")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("PITOOLS_WIDTH", "140")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.chdir(tmp_path)
    return Archive(tmp_path / "agent", seed=27)


# -- search --regex: no catastrophic backtracking ------------------------------------------------


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(a|a?)+$", "(.*a){20}"])
def test_regex_bomb_finishes(run: Run, archive: Archive, pattern: str) -> None:
    w = archive.new("/work/bomb")
    w.user("a" * 41 + "!")
    w.user("a" * 5000 + "!")
    w.assistant("a match: aaab and aaa")
    w.write()
    started = time.process_time()
    data = json.loads(run("search", pattern, "--regex", "--format", "json").stdout)
    assert time.process_time() - started < 10
    assert isinstance(data["hits"], list)


def test_regex_still_finds_and_highlights(run: Run, archive: Archive) -> None:
    w = archive.new("/work/re")
    w.user("first line\ndef load_cache(x):\n  pass \u00fcber SURROGATE tail")
    path = w.write()
    path.write_bytes(path.read_bytes().replace(b"SURROGATE", b"\\ud800"))  # a lone surrogate, as JSON allows
    hits = json.loads(run("search", r"^def \w+_cache", "--regex", "--format", "json").stdout)["hits"]
    assert len(hits) == 1
    hits = json.loads(run("search", "ÜBER", "--regex", "--format", "json").stdout)["hits"]
    assert len(hits) == 1
    a, b = hits[0]["highlights"][0]
    assert hits[0]["snippet"][a:b] == "\u00fcber"
    assert json.loads(run("search", "tail$", "--regex", "--format", "json").stdout)["hits"]


@pytest.mark.parametrize("pattern", ["(?<=a)b", "(a)\\1", "x(?!y)", "("])
def test_regex_engine_limits_are_one_line(run: Run, archive: Archive, pattern: str) -> None:
    archive.new("/work/x").write()
    result = run("search", pattern, "--regex", exit_code=1)
    assert result.stderr.startswith("pitools: invalid regular expression:")
    assert len(result.stderr.strip().splitlines()) == 1
    if pattern != "(":
        assert "RE2 syntax" in result.stderr
