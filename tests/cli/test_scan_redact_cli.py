"""``pitools scan`` and ``pitools redact``: exit codes, formats, schemas, baseline, writes."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pitools.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "golden" / "secrets-planted"
CLEAN = ROOT / "golden" / "clone-labels" / "session.jsonl"
DATA = json.loads((PLANTED / "planted.json").read_text())
SCHEMAS = ROOT / "schemas" / "output"
GH = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"


def check_schema(name: str, doc: dict[str, Any]) -> dict[str, Any]:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    Draft202012Validator(schema).validate(doc)
    return doc


def session(tmp_path: Path, *texts: str, name: str = "s.jsonl") -> Path:
    header = {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    lines = [json.dumps(header, separators=(",", ":"))]
    parent = None
    for i, text in enumerate(texts):
        entry = {
            "type": "message",
            "id": f"m{i}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1},
        }
        lines.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False))
        parent = f"m{i}"
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_commands_are_registered() -> None:
    assert "scan" in COMMANDS and "redact" in COMMANDS


def test_scan_exit_codes(run, tmp_path: Path) -> None:
    run("scan", CLEAN, exit_code=0)
    dirty = session(tmp_path, f"token {GH}")
    result = run("scan", dirty, exit_code=1)
    assert "github-token ghp_… (40 chars) in message.content (entry m0)" in result.stdout
    assert GH not in result.stdout + result.stderr
    run("scan", tmp_path / "missing.jsonl", exit_code=1)
    run("scan", exit_code=2)
    run("scan", dirty, "--format", "xml", exit_code=2)


def test_scan_color_comes_from_the_shared_option(run, tmp_path: Path) -> None:
    """scan has no --color of its own: the group's option (before or after the verb) decides."""
    dirty = session(tmp_path, f"token {GH}")
    env = {"FORCE_COLOR": "1", "NO_COLOR": None}
    assert "\x1b[" in run("scan", dirty, exit_code=1, env=env).stdout
    assert "\x1b[" not in run("scan", dirty, "--color", "never", exit_code=1, env=env).stdout
    assert "\x1b[" not in run("--color", "never", "scan", dirty, exit_code=1, env=env).stdout
    assert "\x1b[" in run("scan", dirty, "--color", "always", exit_code=1, env={"NO_COLOR": "1"}).stdout
    assert run("scan", "--help").stdout.count("--color") == 1


def test_scan_json_matches_schema(run, tmp_path: Path) -> None:
    doc = check_schema(
        "scan", json.loads(run("scan", PLANTED / "session.jsonl", "--format", "json", exit_code=1).stdout)
    )
    assert doc["files"] == 1 and len(doc["findings"]) >= 30
    first = doc["findings"][0]
    assert set(first) == {"file", "line", "entryId", "field", "kind", "preview", "fingerprint"}
    empty = check_schema("scan", json.loads(run("scan", CLEAN, "--format", "json").stdout))
    assert empty == {"findings": [], "files": 1, "accepted": 0}


def test_scan_directory_walks_jsonl_files(run, tmp_path: Path) -> None:
    session(tmp_path, f"a {GH}", name="a.jsonl")
    (tmp_path / "sub").mkdir()
    session(tmp_path / "sub", "nothing here", name="b.jsonl")
    (tmp_path / "notes.txt").write_text(GH)
    doc = json.loads(run("scan", tmp_path, "--format", "json", exit_code=1).stdout)
    assert doc["files"] == 2 and len(doc["findings"]) == 1


def test_baseline_accepts_known_findings(run, tmp_path: Path) -> None:
    dirty = session(tmp_path, f"token {GH}")
    baseline = tmp_path / "baseline.json"
    baseline.write_text(run("scan", dirty, "--format", "json", exit_code=1).stdout)
    assert GH not in baseline.read_text()
    doc = json.loads(run("scan", dirty, "--baseline", baseline, "--format", "json").stdout)
    assert doc["findings"] == [] and doc["accepted"] == 1
    # A new secret is still reported.
    other = session(tmp_path, f"token {GH}", "and " + "ghp_" + "Z" * 18 + "9y8X7w6V5u4T3s2R1q0P", name="o.jsonl")
    doc = json.loads(run("scan", other, "--baseline", baseline, "--format", "json", exit_code=1).stdout)
    assert len(doc["findings"]) == 1 and doc["accepted"] == 1
    (tmp_path / "bad.json").write_text("[1]")
    run("scan", dirty, "--baseline", tmp_path / "bad.json", exit_code=1)


def test_github_format(run, tmp_path: Path) -> None:
    dirty = session(tmp_path, f"token {GH}")
    out = run("scan", dirty, "--format", "github", exit_code=1).stdout.splitlines()
    assert len(out) == 1
    assert out[0].startswith("::error file=") and ",line=2,title=secret github-token::" in out[0]


def test_sarif_structure(run) -> None:
    doc = json.loads(run("scan", PLANTED / "session.jsonl", "--format", "sarif", exit_code=1).stdout)
    # No SARIF schema ships in a package we depend on: a structural check of what 2.1.0 requires.
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "pitools-scan"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    results = doc["runs"][0]["results"]
    assert len(results) >= 30
    for r in results:
        assert r["ruleId"] in rule_ids and rule_ids[r["ruleIndex"]] == r["ruleId"]
        assert r["level"] == "error" and r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith("session.jsonl") and loc["region"]["startLine"] >= 1
        assert len(r["partialFingerprints"]["pitoolsSecret/v1"]) == 32


def test_value_options(run, tmp_path: Path) -> None:
    dirty = session(tmp_path, "db password is Corr3ct-Horse", "short abc")
    run("scan", dirty, "--no-entropy", exit_code=0)
    result = run("scan", dirty, "--value", "Corr3ct-Horse", exit_code=1)
    assert "given-value Cor… (13 chars)" in result.stdout
    values = tmp_path / "v.txt"
    values.write_text("Corr3ct-Horse\nabc\n")
    result = run("scan", dirty, "--values-file", values, exit_code=1)
    assert "shorter than 6" in result.stderr
    run("scan", dirty, "--env", exit_code=1, env={"DB_PASSWORD": "Corr3ct-Horse"})
    run("scan", dirty, "--env", exit_code=0, env={"DB_HOST": "Corr3ct-Horse"})
    run("scan", dirty, "--values-file", tmp_path / "none.txt", exit_code=1)


def test_pi_keys_from_agent_dir_and_commands_never_run(run, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    marker = tmp_path / "ran"
    (agent / "auth.json").write_text(json.dumps({"mistral": {"type": "api_key", "key": "Mistr4lKeyValue0001"}}))
    models = {"providers": {"corp": {"baseUrl": "http://x", "apiKey": f"!touch {marker}", "api": "openai-completions"}}}
    (agent / "models.json").write_text(json.dumps(models))
    dirty = session(tmp_path, "key Mistr4lKeyValue0001 used")
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    result = run("scan", dirty, "--no-entropy", exit_code=1, env=env)
    assert "pi-api-key" in result.stdout and "!command" in result.stderr
    assert not marker.exists()
    run("scan", dirty, "--no-entropy", "--no-pi-keys", exit_code=0, env=env)


def test_redact_output_and_exit_codes(run, tmp_path: Path) -> None:
    src = session(tmp_path, "hello", f"token {GH}", "bye")
    out = tmp_path / "out.jsonl"
    result = run("redact", src, "-o", out, "--key", "k")
    assert "redacted 1 secret of 1 kind; 1 line of 4 rewritten" in result.stderr
    before, after = src.read_bytes().splitlines(), out.read_bytes().splitlines()
    assert before[:2] == after[:2] and before[3] == after[3]
    assert b"[REDACTED:github-token:" in after[2] and GH.encode() not in out.read_bytes()
    run("scan", out, exit_code=0)
    run("redact", src, "-o", out, exit_code=1)  # never overwrites
    before = src.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    dry = run("redact", src, "--key", "k")  # no -o/--in-place: a dry run, as for every writer
    assert "would have redacted 1 secret of 1 kind; 1 line of 4 to rewrite; nothing written" in dry.stderr
    assert src.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == listing
    assert json.loads(run("redact", src, "--dry-run", "--format", "json").stdout)["output"] is None
    run("redact", src, "--dry-run", "-o", tmp_path / "w.jsonl", exit_code=2)
    run("redact", src, "-o", tmp_path / "x.jsonl", "--in-place", exit_code=2)
    run("redact", src, "-o", tmp_path / "y.jsonl", "--no-backup", exit_code=2)
    run("redact", tmp_path / "missing.jsonl", "-o", tmp_path / "z.jsonl", exit_code=1)


def test_same_key_same_placeholders(run, tmp_path: Path) -> None:
    src = session(tmp_path, f"a {GH}", f"b {GH}")
    outs = []
    for name in ("1", "2"):
        out = tmp_path / f"{name}.jsonl"
        run("redact", src, "-o", out, "--key", "fixed")
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    lines = outs[0].splitlines()
    ph = lines[1].split(b"a ")[1].split(b'"')[0]
    assert ph.startswith(b"[REDACTED:github-token:") and ph in lines[2]
    random_run = tmp_path / "3.jsonl"
    run("redact", src, "-o", random_run)
    assert random_run.read_bytes() != outs[0]


def test_redact_in_place_keeps_a_backup(run, tmp_path: Path) -> None:
    src = session(tmp_path, f"token {GH}")
    original = src.read_bytes()
    result = run("redact", src, "--in-place", "--format", "json")
    doc = check_schema("redact", json.loads(result.stdout))
    assert doc["backup"] and Path(doc["backup"]).read_bytes() == original
    assert doc["changedLines"] == 1 and doc["findings"][0]["kind"] == "github-token"
    assert GH.encode() not in src.read_bytes()
    src2 = session(tmp_path, f"token {GH}", name="t.jsonl")
    run("redact", src2, "--in-place", "--no-backup")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("t.jsonl.bak")] == []


def test_redact_in_place_backup_is_owner_only_said_and_found_by_scan(run, tmp_path: Path) -> None:
    """Issue 36 item 12: the backup keeps every secret; it was world-readable like the session,
    unmentioned, and `scan DIR` skipped it."""
    src = session(tmp_path, f"token {GH}")
    src.chmod(0o644)
    result = run("redact", src, "--in-place")
    (backup,) = tmp_path.glob("s.jsonl.bak-*")
    assert backup.stat().st_mode & 0o777 == 0o600 and src.stat().st_mode & 0o777 == 0o644
    assert f"backup kept at {backup}: it still holds every secret (owner-only, mode 0600)" in result.stderr
    scanned = run("scan", tmp_path, "--format", "json", exit_code=1)
    doc = json.loads(scanned.stdout)
    assert doc["files"] == 2 and {f["file"] for f in doc["findings"]} == {str(backup)}
    assert "1 of the files with findings are backups pitools kept" in scanned.stderr
    (tmp_path / "s.jsonl.bak-notours").write_text(GH)  # only pitools' own backup names are taken
    assert json.loads(run("scan", tmp_path, "--format", "json", exit_code=1).stdout)["files"] == 2


def test_redact_refuses_when_the_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.core.secrets.detect import Detector
    from pitools.core.secrets.redact import RedactOptions
    from pitools.errors import SessionChangedError
    from pitools.ops import redact as ops

    src = session(tmp_path, f"token {GH}")
    original_lines = ops._lines

    def lines_then_append(path: str):  # another process appends while pitools rewrites
        yield from original_lines(path)
        with open(path, "ab") as fh:
            fh.write(b'{"type":"label"}\n')

    monkeypatch.setattr(ops, "_lines", lines_then_append)
    with pytest.raises(SessionChangedError):
        ops.redact_file(str(src), detector=Detector(), options=RedactOptions(key=b"k"), in_place=True)
    assert GH.encode() in src.read_bytes()  # untouched (plus the other writer's line)
    assert not [p for p in tmp_path.iterdir() if ".bak-" in p.name]


def test_strip_and_paths_options(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "s.jsonl"
    shutil.copy(PLANTED / "session.jsonl", src)
    out = tmp_path / "o.jsonl"
    env = {"HOME": "/home/planted", "USER": "planted"}
    result = run("redact", src, "-o", out, "--strip-images", "--strip-thinking", "--paths", "--format", "json", env=env)
    doc = check_schema("redact", json.loads(result.stdout))
    assert doc["imagesRemoved"] == 1 and doc["thinkingRemoved"] == 1 and doc["pathsReplaced"] >= 2
    text = out.read_text()
    assert '"type":"image"' not in text and '"type":"thinking"' not in text and "thinkingSignature" not in text
    assert "[image removed: image/png]" in text
    assert "/home/planted" not in text and '"cwd":"~/project"' in text
    # Same tree: ids and parents in the same order, same line count.
    src_lines, out_lines = src.read_text().splitlines(), text.splitlines()
    assert len(src_lines) == len(out_lines)
    good = [i for i, ln in enumerate(src_lines) if ln.endswith("}")]
    assert [ids_of(src_lines[i]) for i in good] == [ids_of(out_lines[i]) for i in good]


def ids_of(line: str) -> tuple[Any, Any]:
    d = json.loads(line)
    return d.get("id"), d.get("parentId")


def test_export_redact(run, tmp_path: Path) -> None:
    src = session(tmp_path, f"token {GH}")
    md = run("export", src, "--redact").stdout
    assert "[REDACTED:github-token:" in md and GH not in md
    jsonl = run("export", src, "--redact", "--format", "jsonl").stdout
    assert "[REDACTED:github-token:" in jsonl
    run("export", src, "--value", "abcdefgh", exit_code=2)
    plain = run("export", src).stdout
    assert GH in plain


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_export_redact_names_the_users_file_not_its_temporary_copy(run, tmp_path: Path, fmt: str) -> None:
    # The redacted copy is a temporary file: the document names (and the page resumes) the
    # user's session, while its text stays redacted.
    src = session(tmp_path, f"token {GH}")
    first = run("export", src, "--redact", "--format", fmt).stdout
    assert "pitools-redact" not in first and tempfile.gettempdir() not in first.replace(str(tmp_path), "")
    assert GH not in first and "[REDACTED:github-token:" in first
    if fmt == "html":
        assert f"pi --session {os.path.abspath(src)}" in first
    else:
        assert f"**File:** `{src}`" in first


def test_help_mentions_thinking_replay(run) -> None:
    text = run("redact", "--help").stdout
    assert "no longer replay" in text


def test_hostile_names_reach_the_terminal_escaped(run, tmp_path: Path) -> None:
    evil = session(tmp_path, f"token {GH}", name="a\x1b[31mred\x07.jsonl")
    for fmt in ("human", "github"):
        result = run("scan", evil, "--format", fmt, exit_code=1)
        assert "\x1b" not in result.stdout + result.stderr and "\x07" not in result.stdout + result.stderr
    out = tmp_path / "o\x1b]0;title\x07.jsonl"
    result = run("redact", evil, "-o", out)
    assert "\x1b" not in result.stderr and out.exists()
