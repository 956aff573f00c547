"""A session whose ids, parents, types and model names hold lone surrogates (JSON allows
``"\\ud800"``; session text may be hostile) must not break ``ls``, ``usage`` or ``search`` of the
whole archive (sqlite3 cannot encode such strings), and its own entries stay searchable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

T = "2026-01-01T00:00:0{}.000Z"


def _session(folder: Path) -> Path:
    usage = {
        "input": 1,
        "output": 2,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 3,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5},
    }
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "hdr", "timestamp": T.format(0), "cwd": "/w"},
        {
            "type": "message",
            "id": "\ud800x",
            "parentId": None,
            "timestamp": T.format(1),
            "message": {"role": "user", "content": "first zebraword", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "b2",
            "parentId": "\ud800x",
            "timestamp": T.format(2),
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "reply quaggaword"}],
                "provider": "p\udc01",
                "model": "m",
                "usage": usage,
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
        {"type": "x\udfff", "id": "c3", "parentId": "b2", "timestamp": T.format(3)},
        {
            "type": "message",
            "id": "\udc00",
            "parentId": "c3",
            "timestamp": T.format(4),
            "message": {"role": "user", "content": "again okapiword", "timestamp": 4},
        },
    ]
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    # json.dumps escapes the lone surrogates (\ud800), as a JSON writer may
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="ascii")
    return path


def _pitools(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "PITOOLS_"))}
    env.update(
        PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
        PITOOLS_CACHE_DIR=str(tmp_path / "cache"),
        HOME=str(tmp_path / "home"),
        TZ="UTC",
    )
    return subprocess.run(
        [sys.executable, "-m", "pitools", *args], capture_output=True, env=env, cwd=tmp_path, check=False, timeout=120
    )


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
def test_lone_surrogate_ids_keep_the_archive_working(tmp_path: Path) -> None:
    good = tmp_path / "agent" / "sessions" / "--g--"
    good.mkdir(parents=True)
    good_file = good / "ok.jsonl"
    good_file.write_text(
        json.dumps({"type": "session", "version": 3, "id": "ok", "timestamp": T.format(0), "cwd": "/g"})
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "g1",
                "parentId": None,
                "timestamp": T.format(1),
                "message": {"role": "user", "content": "plain zebraword", "timestamp": 1},
            }
        )
        + "\n"
    )
    bad = _session(tmp_path / "agent" / "sessions" / "--w--")
    ls = _pitools(tmp_path, "ls", "--all", "--format", "json")
    assert ls.returncode == 0, ls.stderr
    assert {s["id"] for s in json.loads(ls.stdout)["sessions"]} == {"ok", "hdr"}
    usage = _pitools(tmp_path, "usage", "--format", "json")
    assert usage.returncode == 0, usage.stderr
    assert json.loads(usage.stdout)["totals"]["cost"] == 0.5
    # both the lean warm search and the general one (a --regex scan) find the entries, under
    # the file's real ids (JSON escapes the lone surrogates)
    for extra in ([], ["--regex"]):
        for word, eid in (("zebraword", "\ud800x"), ("quaggaword", "b2"), ("okapiword", "\udc00")):
            r = _pitools(tmp_path, "search", word, "--format", "json", *extra)
            assert r.returncode == 0, r.stderr
            hits = [h for h in json.loads(r.stdout)["hits"] if h["session"]["path"] == str(bad)]
            assert [h["entryId"] for h in hits] == [eid], (word, extra, r.stdout)
            assert hits[0]["inContext"] is True
    human = _pitools(tmp_path, "search", "zebraword")
    assert human.returncode == 0 and b"\\ud800x" in human.stdout and b"\xed" not in human.stdout
    # an append to such a file is indexed again whole (its stored ids are not the file's)
    with bad.open("a", encoding="ascii") as fh:
        fh.write(
            json.dumps(
                {
                    "type": "message",
                    "id": "d5",
                    "parentId": "\udc00",
                    "timestamp": T.format(5),
                    "message": {"role": "user", "content": "later gnuword", "timestamp": 5},
                }
            )
            + "\n"
        )
    update = _pitools(tmp_path, "index", "--format", "json")
    assert update.returncode == 0, update.stderr
    assert json.loads(update.stdout)["update"]["reindexed"] == 1
    r = _pitools(tmp_path, "search", "gnuword", "--format", "json")
    assert [h["entryId"] for h in json.loads(r.stdout)["hits"]] == ["d5"]
