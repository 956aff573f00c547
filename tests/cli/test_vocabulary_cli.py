"""One vocabulary in human output: unknown models, local times with the zone, thousands
separators and plurals, truncation markers, line-number leaf references for v1 files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pitools.render.vocab import ago, local_time, model_name, more, n, plural
from tests.golden.test_conformance import GOLDEN

SEED = GOLDEN / "seed-running-example" / "session.jsonl"
V1 = GOLDEN / "gen-s0002_v1" / "session.jsonl"


def test_vocabulary_helpers() -> None:
    assert n(175004) == "175,004" and n("12") == "12" and n(True) == "True"
    assert plural(1, "tool call") == "1 tool call" and plural(2, "tool call") == "2 tool calls"
    assert plural(1204, "entry", "entries") == "1,204 entries"
    assert model_name(None, None) == "unknown model" and model_name("openai", "gpt-5") == "openai/gpt-5"
    assert local_time("2026-07-29T09:01:01.000Z") == "2026-07-29 09:01 UTC"  # TZ=UTC in tests/cli
    now = dt.datetime(2026, 7, 29, 12, 0, tzinfo=dt.UTC)
    assert ago("2026-07-29T09:00:00Z", now) == "3 h ago" and ago("2026-07-29T11:59:30Z", now) == "just now"
    assert more(48) == "… 48 more (use --all)"


def _session(tmp_path: Path, leaves: int) -> Path:
    rows = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}]
    rows.append(
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": "2026-01-01T00:00:00.100Z",
         "provider": "openai", "modelId": "gpt-5"}
    )  # fmt: skip
    rows.append(
        {"type": "message", "id": "u0", "parentId": "m0", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "start", "timestamp": 1}}
    )  # fmt: skip
    for i in range(leaves):
        rows.append(
            {"type": "message", "id": f"a{i}", "parentId": "u0", "timestamp": "2026-01-01T00:00:02.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": f"reply {i}"}],
                         "stopReason": "stop", "timestamp": 2}}
        )  # fmt: skip
    file = tmp_path / "s.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return file


def test_inspect_unknown_model_truncation_and_all(run, tmp_path: Path) -> None:
    file = _session(tmp_path, 15)
    data = json.loads(run("inspect", file, "--format", "json").stdout)
    assert {"provider": None, "modelId": None, "assistantMessages": 15} in data["models"]
    assert {"provider": "openai", "modelId": "gpt-5", "assistantMessages": 0} in data["models"]
    out = run("inspect", file, "--width", "400").stdout
    assert "unknown model ×15" in out and "openai/gpt-5 (switched to, no replies)" in out
    assert "None/None" not in out and "×0" not in out
    assert "… 3 more (use --all)" in out and "leaves (15)" in out
    everything = run("inspect", file, "--all", "--width", "400").stdout
    assert "more (use --all)" not in everything and "a14 (depth" in everything
    assert "created           2026-01-01 00:00:00 UTC" in out


def test_context_says_unknown_model(run) -> None:
    assert "unknown model" in run("context", SEED).stdout
    assert "?/?" not in run("context", SEED, "--format", "markdown").stdout


def test_branches_time_has_the_zone(run) -> None:
    assert "2026-07-29 09:05 UTC" in run("branches", SEED).stdout


def test_v1_files_note_the_made_up_ids_and_take_line_numbers(run) -> None:
    r = run("tree", V1, "--leaf", "L7")
    assert "leaf 00000006 (--leaf)" in r.stdout
    assert "stand-ins, not in the file" in r.stderr and "--leaf L17" in r.stderr
    assert "stand-ins" not in run("tree", SEED).stderr  # a v3 file has real ids
    bad = run("context", V1, "--leaf", "L1", exit_code=1)
    assert "line 1 of the file holds no entry" in bad.stderr
    assert run("context", SEED, "--leaf", "L3", "--format", "json").stdout.count('"leafId":"A1"') == 1


def test_counts_are_worded_with_their_plural(run, tmp_path: Path) -> None:
    # No "leaf/leaves", "one(s)", "all 1 leaves", "1 ... roles".
    repaired = run("repair", GOLDEN / "repair-crlf" / "session.jsonl", "--dry-run").stdout
    assert "unchanged at 2 leaves and builds at 0 repaired leaves" in repaired
    assert "leaf/leaves" not in repaired and "one(s)" not in repaired
    one_leaf = _session(tmp_path, 1)
    slimmed = run("slim", one_leaf, "--images").stdout
    assert "identical at the only leaf" in slimmed and "all 1 leaves" not in slimmed
    (tmp_path / "three").mkdir()
    assert "identical at all 3 leaves" in run("slim", _session(tmp_path / "three", 3), "--images").stdout
    migrated = run("migrate", GOLDEN / "v2-hook-message" / "session.jsonl").stdout
    assert "1 hookMessage role renamed to custom" in migrated
