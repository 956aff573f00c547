"""``pitools heal``: the dry run, ``--apply`` and ``-o`` around the core plan.

What Pi and pi-ai make of the healed files is proven in tests/golden/test_heal.py; these tests
cover the command: exit codes, what is (and is not) written, consent, usage errors, hostile text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests import support

GOLDEN = support.ROOT / "golden"
HANDOFF = GOLDEN / "request-handoff" / "session.jsonl"
SCHEMA = json.loads((support.ROOT / "schemas" / "output" / "heal.schema.json").read_text())
MODEL = "anthropic/claude-sonnet-4-5"


def _schema_ok(data: Any) -> None:
    Draft202012Validator.check_schema(SCHEMA)
    errors = list(Draft202012Validator(SCHEMA).iter_errors(data))
    assert not errors, errors[0].message


@pytest.fixture
def wedged(tmp_path: Path) -> Path:
    p = tmp_path / "run.jsonl"
    shutil.copy(HANDOFF, p)
    return p


def test_dry_run_lists_the_remedies_and_writes_nothing(run: Any, wedged: Path) -> None:
    before = wedged.read_bytes()
    result = run("heal", wedged, "--for-model", MODEL, "--no-config", "--format", "json", exit_code=1)
    data = json.loads(result.stdout)
    _schema_ok(data)
    assert [r["entryId"] for r in data["remedies"]] == ["e005", "e006", "e009", "e010"]
    assert {c for r in data["remedies"] for c in r["why"]} == {
        "foreign-thinking-signature",
        "tool-id-pattern",
        "thinking-missing-in-tool-loop",
    }
    assert data["ok"] is True and data["after"] == [] and data["written"] is False
    assert [f["healedBy"] for f in data["before"]] == [["e005"], ["e005", "e006"], ["e005", "e006"], ["e009", "e010"]]
    assert wedged.read_bytes() == before
    assert sorted(p.name for p in wedged.parent.iterdir()) == ["run.jsonl"]
    human = run("heal", wedged, "--for-model", MODEL, "--no-config", exit_code=1).stdout
    assert "the model no longer sees" in human and "--apply" in human


def test_apply_appends_context_edits_and_the_check_passes(run: Any, wedged: Path) -> None:
    before = wedged.read_bytes()
    result = run("heal", wedged, "--for-model", MODEL, "--no-config", "--apply", "--yes", "--format", "json")
    data = json.loads(result.stdout)
    _schema_ok(data)
    after = wedged.read_bytes()
    assert after.startswith(before)
    added = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert added == data["entries"] and all(e["type"] == "context_edit" for e in added)
    assert added[0]["parentId"] == "e011"
    assert [e["parentId"] for e in added[1:]] == [e["id"] for e in added[:-1]]
    assert data["backup"] and Path(data["backup"]).read_bytes() == before
    run("request", wedged, "--model", MODEL, "--check", "--no-config")
    again = run("heal", wedged, "--for-model", MODEL, "--no-config")
    assert "nothing to heal" in again.stdout


def test_apply_without_backup(run: Any, wedged: Path) -> None:
    run("heal", wedged, "--for-model", MODEL, "--no-config", "--apply", "--yes", "--no-backup")
    assert sorted(p.name for p in wedged.parent.iterdir()) == ["run.jsonl"]


def test_output_writes_a_clone_with_ids_rewritten(run: Any, wedged: Path, tmp_path: Path) -> None:
    before = wedged.read_bytes()
    new = tmp_path / "healed.jsonl"
    data = json.loads(run("heal", wedged, "--for-model", MODEL, "--no-config", "-o", new, "--format", "json").stdout)
    _schema_ok(data)
    assert wedged.read_bytes() == before
    lines = [json.loads(line) for line in new.read_text().splitlines()]
    assert lines[0]["parentSession"] == str(wedged)
    assert {r["entryId"] for r in data["idRewrites"]} == {"e005", "e009"}
    ids = {b["id"] for e in lines[1:] if e.get("type") == "message" for b in e["message"].get("content") or []
           if isinstance(b, dict) and b.get("type") == "toolCall"}  # fmt: skip
    answered = {e["message"]["toolCallId"] for e in lines[1:] if e.get("type") == "message"
                and e["message"]["role"] == "toolResult"}  # fmt: skip
    assert answered <= ids and all("|" not in i for i in ids)
    run("request", new, "--model", MODEL, "--check", "--no-config")
    assert "nothing to heal" in run("heal", new, "--for-model", MODEL, "--no-config").stdout


def test_nothing_to_heal_exits_0_and_apply_writes_nothing(run: Any, tmp_path: Path) -> None:
    p = tmp_path / "fine.jsonl"
    shutil.copy(GOLDEN / "request-wedges" / "session.jsonl", p)
    before = p.read_bytes()
    assert "nothing to heal" in run("heal", p, "--for-model", MODEL, "--no-config").stdout
    applied = run("heal", p, "--for-model", MODEL, "--no-config", "--apply", "--yes").stdout
    assert "nothing written" in applied
    assert p.read_bytes() == before and sorted(x.name for x in tmp_path.iterdir()) == ["fine.jsonl"]


@pytest.mark.parametrize(
    "args",
    [
        ["--apply", "-o", "x.jsonl"],
        ["--dry-run", "--apply"],
        ["--no-backup"],
        ["--yes"],
    ],
)
def test_usage_errors_exit_2(run: Any, wedged: Path, args: list[str]) -> None:
    run("heal", wedged, "--for-model", MODEL, *args, exit_code=2)


def test_a_malformed_model_is_a_usage_error_and_an_unknown_one_a_one_line_error(run: Any, wedged: Path) -> None:
    for bad in ("claude", "/claude", "anthropic/"):
        healed = run("heal", wedged, "--for-model", bad, exit_code=2)
        asked = run("request", wedged, "--model", bad, exit_code=2)
        # One check of the form, worded once: heal and request say the same about the same value.
        assert healed.stderr.splitlines()[-1] == asked.stderr.splitlines()[-1].replace("--model", "--for-model")
    result = run("heal", wedged, "--for-model", "anthropic/no-such-model", "--no-config", exit_code=1)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_v1_session_is_refused_before_appending(run: Any, tmp_path: Path) -> None:
    p = tmp_path / "old.jsonl"
    shutil.copy(GOLDEN / "gen-s0002_v1" / "session.jsonl", p)  # a v1 file with something to heal
    before = p.read_bytes()
    run("heal", p, "--for-model", MODEL, "--no-config", exit_code=1)
    result = run("heal", p, "--for-model", MODEL, "--no-config", "--apply", "--yes", exit_code=1)
    assert "migrate" in result.stderr and "Traceback" not in result.stderr
    assert p.read_bytes() == before and sorted(x.name for x in tmp_path.iterdir()) == ["old.jsonl"]


def test_hostile_text_never_reaches_the_terminal_raw(run: Any, tmp_path: Path) -> None:
    p = tmp_path / "evil.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "x\x1b]52;c;AAAA\x07",
                     "name": "bash\u202e", "arguments": {"c": "\x1b[2J"}}],
                     "provider": "anthropic", "api": "anthropic-messages", "model": "claude-sonnet-4-5",
                     "stopReason": "toolUse"}},
        {"type": "message", "id": "a3", "parentId": "a2", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "toolResult", "toolCallId": "x\x1b]52;c;AAAA\x07", "toolName": "bash",
                     "content": [{"type": "text", "text": "\x1b[31mred"}], "isError": False, "timestamp": 3}},
    ]  # fmt: skip
    p.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run("heal", p, "--for-model", MODEL, "--no-config", exit_code=1)
    assert "a2" in result.stdout  # the exchange is healed, its id and name shown made safe
    for bad in ("\x1b", "\u202e", "\x07"):
        assert bad not in result.stdout


def test_a_no_at_the_terminal_writes_nothing(run: Any, wedged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.cli import option_groups

    asked: list[str] = []

    def no(question: str) -> bool:
        asked.append(question)
        return False

    monkeypatch.setattr(option_groups, "confirm_at_terminal", lambda out: no)
    before = wedged.read_bytes()
    result = run("heal", wedged, "--for-model", MODEL, "--no-config", "--apply", exit_code=1)
    assert asked and "4 context_edit entries" in asked[0]
    assert "nothing written" in result.stderr
    assert wedged.read_bytes() == before and sorted(p.name for p in wedged.parent.iterdir()) == ["run.jsonl"]


def test_a_file_changed_after_reading_is_not_written(run: Any, wedged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.ops import heal

    planned = heal.plan_for

    def plan_then_pi_appends(*args: Any, **kwargs: Any) -> Any:
        plan = planned(*args, **kwargs)
        with wedged.open("ab") as fh:  # Pi appends a line while pitools was planning
            fh.write(
                b'{"type":"label","id":"zz1","parentId":"e011","timestamp":"2026-11-02T09:01:00.000Z","targetId":"e011","label":"x"}\n'
            )
        return plan

    monkeypatch.setattr(heal, "plan_for", plan_then_pi_appends)
    before = wedged.read_bytes()
    result = run("heal", wedged, "--for-model", MODEL, "--no-config", "--apply", "--yes", exit_code=1)
    assert "changed" in result.stderr and "Traceback" not in result.stderr
    after = wedged.read_bytes()
    assert after.startswith(before) and b"context_edit" not in after


def test_apply_at_another_leaf_makes_it_pis_leaf(run: Any, tmp_path: Path) -> None:
    """--leaf on a branch that is not the last: the edits chain from it, so they are the last
    entries and Pi resumes the healed branch; the other branch is untouched."""
    p = tmp_path / "two.jsonl"
    lines = HANDOFF.read_bytes().splitlines(keepends=True)
    side = b'{"type":"message","id":"s01","parentId":"e004","timestamp":"2026-11-02T09:05:00.000Z","message":{"role":"user","content":"other branch","timestamp":1}}\n'  # noqa: E501
    p.write_bytes(b"".join(lines) + side)
    other = run("context", p, "--leaf", "s01", "--format", "json").stdout
    data = json.loads(
        run("heal", p, "--leaf", "e011", "--for-model", MODEL, "--no-config", "--apply", "--yes", "--no-backup",
            "--format", "json").stdout
    )  # fmt: skip
    assert data["entries"][0]["parentId"] == "e011"
    inspect = json.loads(run("context", p, "--format", "json").stdout)
    assert inspect["leafId"] == data["newLeafId"]
    run("request", p, "--model", MODEL, "--check", "--no-config")
    assert run("context", p, "--leaf", "s01", "--format", "json").stdout == other


def test_new_writes_where_pis_clone_would_and_stdin_cannot_be_written_beside(run: Any, wedged: Path) -> None:
    result = run("heal", wedged, "--for-model", MODEL, "--no-config", "--new", "--format", "json")
    written = Path(json.loads(result.stdout)["writtenTo"])
    assert written.parent == wedged.parent and written.name.endswith(".jsonl") and written != wedged
    header = json.loads(written.read_text().splitlines()[0])
    assert written.name == f"{header['timestamp'].replace(':', '-').replace('.', '-')}_{header['id']}.jsonl"
    data = wedged.read_bytes()
    run("heal", "-", "--for-model", MODEL, "--no-config", "--apply", input=data, exit_code=2)
    run("heal", "-", "--for-model", MODEL, "--no-config", "--new", input=data, exit_code=2)
    dry = run("heal", "-", "--for-model", MODEL, "--no-config", input=data, exit_code=1).stdout
    assert "pitools heal - --for-model" in dry and "-o NEW" in dry


def test_new_honours_session_dir(run: Any, wedged: Path, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    data = json.loads(
        run(
            "heal", wedged, "--session-dir", folder, "--for-model", MODEL, "--no-config", "--new", "--format", "json"
        ).stdout
    )
    assert Path(data["writtenTo"]).parent == folder


def test_each_finding_is_healed_by_its_own_entry(run: Any, tmp_path: Path) -> None:
    """Two messages with the same refused image bytes: the human view and ``healedBy`` name, for
    each finding, the entry holding that image, not every entry holding those bytes."""
    lines = (GOLDEN / "heal-wedges" / "session.jsonl").read_text().splitlines()[:6]  # header .. e005
    image = json.loads(lines[4])["message"]["content"][1]
    assert image["mimeType"] == "image/bmp"
    reply = json.loads(lines[5])
    more = [
        {"type": "message", "id": "e006", "parentId": "e005", "timestamp": "2026-11-02T09:00:06.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "And this?"}, image], "timestamp": 1}},
        {**reply, "id": "e007", "parentId": "e006"},
        {"type": "message", "id": "e008", "parentId": "e007", "timestamp": "2026-11-02T09:00:08.000Z",
         "message": {"role": "user", "content": "thanks", "timestamp": 2}},
    ]  # fmt: skip
    p = tmp_path / "two.jsonl"
    p.write_text("\n".join([*lines, *(json.dumps(e) for e in more)]) + "\n")
    data = json.loads(run("heal", p, "--for-model", MODEL, "--no-config", "--format", "json", exit_code=1).stdout)
    _schema_ok(data)
    assert [(f["code"], f["index"], f["healedBy"]) for f in data["before"]] == [
        ("image-media-type", 0, ["e004"]),
        ("image-media-type", 2, ["e006"]),
    ]
    human = run("heal", p, "--for-model", MODEL, "--no-config", exit_code=1).stdout
    assert [line.strip() for line in human.splitlines() if "healed by" in line] == [
        "healed by editing e004",
        "healed by editing e006",
    ]


def test_a_finding_no_edit_reaches_names_no_entry(run: Any) -> None:
    """golden/fork-s0022-compactions holds the same mislabelled PNG in three messages; the first is a
    message entry with the custom role, which Pi's appendContextEdit does not edit. Its finding
    names no entry (it is listed as not healable) instead of borrowing the other two."""
    case = GOLDEN / "fork-s0022-compactions" / "session.jsonl"
    data = json.loads(run("heal", case, "--for-model", MODEL, "--no-config", "--format", "json", exit_code=1).stdout)
    _schema_ok(data)
    assert [(f["code"], f["healedBy"]) for f in data["before"]] == [
        ("image-data-mismatch", []),
        ("image-data-mismatch", ["20d35d7c"]),
        ("image-data-mismatch", ["40b88333"]),
    ]
    assert [u["path"] for u in data["unhealed"]] == [data["before"][0]["path"]]


#: One model of each API the check has rules for.
SWEEP_MODELS = ["anthropic/claude-sonnet-4-5", "groq/llama-3.1-8b-instant", "google/gemini-3.1-pro-preview",
                "openai/gpt-4o"]  # fmt: skip


@pytest.mark.parametrize("model", support.fast_sample(SWEEP_MODELS, 1))
def test_every_golden_session_heals_to_the_schema(run: Any, model: str) -> None:
    """``heal --format json`` on every golden session (Pi-written, generated and broken ones): the
    output fits the schema, each finding's ``healedBy`` names only entries a remedy edits, and a
    file heal refuses gets one stderr line (exit 1), never a traceback."""
    files = sorted(p for p in GOLDEN.glob("*/*.jsonl") if p.name not in ("requests.jsonl", "heal.jsonl"))
    files = [p for p in files if not p.name.startswith("requests-")]
    assert len(files) > 150
    healed = 0
    for path in files:
        result = run("heal", path, "--for-model", model, "--no-config", "--format", "json", exit_code=None)
        assert result.exit_code in (0, 1), (path, result.stderr)
        if not result.stdout:
            assert result.stderr.startswith("pitools: ") and result.stderr.count("\n") == 1, (path, result.stderr)
            continue
        data = json.loads(result.stdout)
        _schema_ok(data)
        edited = {r["entryId"] for r in data["remedies"]}
        assert all(set(f["healedBy"]) <= edited for f in data["before"]), path
        healed += bool(data["remedies"])
    assert healed > 10
