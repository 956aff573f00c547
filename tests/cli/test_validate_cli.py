"""``pitools validate``: exit codes, the three formats, file discovery, filters, parallel runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from syrupy.assertion import SnapshotAssertion

from pitools.core.validate import Finding, ValidationReport
from pitools.ops.validate import PARALLEL_THRESHOLD
from pitools.render.validate import github_lines, summary_text
from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"
OUTPUT_SCHEMA = json.loads((ROOT / "schemas" / "output" / "validate.schema.json").read_text())

CLEAN = GOLDEN / "gen-s0012_v3" / "session.jsonl"  # no findings at all
WARNINGS_ONLY = GOLDEN / "gen-s0001_v3" / "session.jsonl"  # one warning (context-edit-not-editable)
BROKEN = GOLDEN / "broken-orphan" / "session.jsonl"  # one error (orphan-entry)


def check_output_schema(stdout: str) -> dict[str, Any]:
    data = json.loads(stdout)
    Draft202012Validator.check_schema(OUTPUT_SCHEMA)
    errors = list(Draft202012Validator(OUTPUT_SCHEMA).iter_errors(data))
    assert not errors, errors[0].message
    return data


# -- exit codes -----------------------------------------------------------------------------------


def test_exit_0_on_a_clean_file(run: Any) -> None:
    result = run("validate", CLEAN)
    assert result.stdout == "1 file checked: no problems found\n"
    assert result.stderr == ""


def test_exit_1_on_findings(run: Any) -> None:
    result = run("validate", BROKEN, exit_code=1)
    assert "orphan-entry" in result.stdout


def test_exit_1_on_a_missing_file_without_traceback(run: Any, tmp_path: Path) -> None:
    result = run("validate", tmp_path / "nope.jsonl", exit_code=1)
    assert "unreadable-file" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--select", "no-such-code", "x.jsonl"],
        ["--ignore", "orphan-entry,bogus", "x.jsonl"],
        ["--min-severity", "fatal", "x.jsonl"],
        ["--format", "xml", "x.jsonl"],
    ],
)
def test_exit_2_on_usage_errors(run: Any, args: list[str]) -> None:
    result = run("validate", *args, exit_code=2)
    assert result.stdout == ""
    assert "Usage:" in result.stderr


def test_strict_fails_on_warnings(run: Any) -> None:
    assert "warning context-edit-not-editable" in run("validate", WARNINGS_ONLY).stdout
    run("validate", "--strict", WARNINGS_ONLY, exit_code=1)
    run("validate", "--strict", CLEAN)


# -- filters --------------------------------------------------------------------------------------


def test_select_and_ignore_accept_repeats_and_comma_lists(run: Any) -> None:
    case = GOLDEN / "gen-s0021_broken-garbagefirst+secondheader+dupidcycle" / "session.jsonl"
    codes = lambda result: {f["code"] for f in json.loads(result.stdout)["files"][0]["findings"]}  # noqa: E731
    select = ["--select", "duplicate-id,orphan-entry", "--select", "blank-line"]
    selected = run("validate", "--format", "json", *select, case, exit_code=1)
    assert codes(selected) == {"duplicate-id", "orphan-entry", "blank-line"}
    ignore = [
        "--ignore",
        "duplicate-id, orphan-entry",
        "--ignore",
        "parent-cycle",
        "--ignore",
        "malformed-json",
    ]
    ignored = run("validate", "--format", "json", *ignore, case)
    assert codes(ignored) and not codes(ignored) & {
        "duplicate-id",
        "orphan-entry",
        "parent-cycle",
        "malformed-json",
    }


def test_min_severity_hides_lower_findings(run: Any) -> None:
    case = GOLDEN / "gen-s0047_v3" / "session.jsonl"
    everything = check_output_schema(run("validate", "--format", "json", case).stdout)
    assert everything["counts"]["info"] > 0
    warnings = check_output_schema(run("validate", "--format", "json", "--min-severity", "warning", case).stdout)
    assert warnings["counts"] == dict(everything["counts"], info=0)


# -- formats --------------------------------------------------------------------------------------


def test_human_output(run: Any, snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # relative paths keep the snapshot machine-independent
    files = ["golden/gen-s0013_broken-orphan+dupids/session.jsonl", "golden/gen-s0012_v3/session.jsonl"]
    result = run("validate", *files, exit_code=1)
    assert result.stdout == snapshot
    # Messages only on stderr: here, that `pitools repair` can fix these findings.
    assert (
        result.stderr
        == "pitools: hint: `pitools repair FILE --dry-run` shows how it would fix: duplicate-id, orphan-entry\n"
    )


def test_human_output_is_one_unwrapped_line_per_finding(run: Any) -> None:
    case = GOLDEN / "gen-s0021_broken-garbagefirst+secondheader+dupidcycle" / "session.jsonl"
    lines = run("validate", case, exit_code=1, env={"COLUMNS": "40"}).stdout.splitlines()
    assert all(line.startswith(f"{case}:") for line in lines[:-1])
    assert lines[-1].startswith("1 file checked, 1 with findings:") and lines[-1].endswith("— failed")


def test_session_text_is_never_read_as_markup(run: Any, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    entry = {
        "type": "[bold]x[/bold]",
        "id": "[red]a",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01.000Z",
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    result = run("validate", "--color", "always", path)
    assert 'unknown entry type "[bold]x[/bold]"' in result.stdout


def test_json_output(run: Any) -> None:
    result = run("validate", "--format", "json", CLEAN, BROKEN, exit_code=1)
    data = check_output_schema(result.stdout)
    assert data["status"] == "fail"
    assert [f["path"] for f in data["files"]] == [str(CLEAN), str(BROKEN)]
    assert data["files"][0] == {
        "path": str(CLEAN),
        "findings": [],
        "counts": {"error": 0, "warning": 0, "info": 0},
    }
    (finding,) = data["files"][1]["findings"]
    assert finding["code"] == "orphan-entry" and finding["severity"] == "error"
    assert isinstance(finding["line"], int) and isinstance(finding["entryId"], str)
    assert data["counts"] == {"error": 1, "warning": 0, "info": 0}


def test_json_envelope_when_everything_passes(run: Any) -> None:
    data = check_output_schema(run("validate", "--format", "json", CLEAN, WARNINGS_ONLY).stdout)
    assert data["status"] == "ok" and data["counts"]["warning"] == 1
    strict = check_output_schema(run("validate", "--format", "json", "--strict", WARNINGS_ONLY, exit_code=1).stdout)
    assert strict["status"] == "fail"


def test_github_output(run: Any) -> None:
    result = run("validate", "--format", "github", BROKEN, WARNINGS_ONLY, exit_code=1)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"::error file={BROKEN},line=") and ",title=orphan-entry::parentId" in lines[0]
    assert lines[1].startswith(f"::warning file={WARNINGS_ONLY},line=")
    assert lines[-1].startswith("2 files checked")


def test_github_annotations_escape_their_fields() -> None:
    report = ValidationReport(
        "dir,with:odd/a.jsonl",
        (Finding("orphan-entry", "error", "50% of\nit", 3), Finding("multiple-roots", "info", "roots", None)),
    )
    assert github_lines([report]) == [
        "::error file=dir%2Cwith%3Aodd/a.jsonl,line=3,title=orphan-entry::50%25 of%0Ait",
        "::notice file=dir%2Cwith%3Aodd/a.jsonl,title=multiple-roots::roots",
    ]
    assert summary_text([report], "error").endswith("1 error, 0 warnings, 1 info — failed")


# -- files and directories ------------------------------------------------------------------------


def test_directories_are_searched_recursively(run: Any, tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copy(CLEAN, tmp_path / "a" / "b" / "deep.jsonl")
    shutil.copy(BROKEN, tmp_path / "top.jsonl")
    (tmp_path / "notes.txt").write_text("not a session")
    data = json.loads(run("validate", "--format", "json", tmp_path, exit_code=1).stdout)
    assert [f["path"] for f in data["files"]] == [
        str(tmp_path / "a" / "b" / "deep.jsonl"),
        str(tmp_path / "top.jsonl"),
    ]


def test_a_directory_without_sessions_is_a_usage_error(run: Any, tmp_path: Path) -> None:
    # A mistyped CI path must not pass with nothing checked (scan says the same).
    (tmp_path / "notes.txt").write_text("not a session")
    for command in ("validate", "scan"):
        result = run(command, tmp_path, exit_code=2)
        assert "no session files (*.jsonl) under" in result.stderr and result.stdout == ""


def test_many_files_are_checked_in_parallel_and_reported_in_order(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = sorted(p.parent.name for p in GOLDEN.glob("gen-s000*/session.jsonl"))
    assert len(cases) > PARALLEL_THRESHOLD
    for case in cases:
        shutil.copy(GOLDEN / case / "session.jsonl", tmp_path / f"{case}.jsonl")
    pools: list[int] = []
    real_pool = __import__("concurrent.futures").futures.ProcessPoolExecutor

    def counting_pool(*args: Any, **kwargs: Any) -> Any:
        pools.append(kwargs.get("max_workers", 0))
        return real_pool(*args, **kwargs)

    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", counting_pool)
    parallel = json.loads(run("validate", "-j", "2", "--format", "json", tmp_path, exit_code=None).stdout)
    assert pools == [2]
    assert [Path(f["path"]).stem for f in parallel["files"]] == cases
    one_by_one = [
        json.loads(run("validate", "--format", "json", tmp_path / f"{c}.jsonl", exit_code=None).stdout) for c in cases
    ]
    assert parallel["files"] == [single["files"][0] for single in one_by_one]


def test_jobs_1_uses_no_pool(run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(PARALLEL_THRESHOLD + 2):
        shutil.copy(CLEAN, tmp_path / f"{i}.jsonl")

    def no_pool(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("-j 1 must not start worker processes")

    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", no_pool)
    assert "6 files checked: no problems found" in run("validate", "-j", "1", tmp_path).stdout


def test_a_big_file_split_between_two_processes_reports_the_same(run: Any, every_file_is_big: list[bool]) -> None:
    broken = GOLDEN / "broken-duplicate-ids" / "session.jsonl"
    one = run("validate", "-j", "1", "--format", "json", broken, exit_code=1).stdout
    assert every_file_is_big == []
    two = run("validate", "-j", "2", "--format", "json", broken, exit_code=1).stdout
    assert every_file_is_big == [True]
    assert one == two


def test_progress_bar_only_decorates_stderr(run: Any, tmp_path: Path) -> None:
    for i in range(3):
        shutil.copy(CLEAN, tmp_path / f"{i}.jsonl")
    result = run("validate", "--color", "always", tmp_path)  # a forced terminal shows progress
    assert "3 files checked: no problems found" in result.stdout
    assert "validating" not in result.stdout


def test_pre_commit_hook_definition() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: pitools-validate" in text
    assert "entry: pitools validate" in text
    assert "language: python" in text
    assert "files: \\.jsonl$" in text


# -- robustness -----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_exit_0_or_1_without_traceback(run: Any, tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    result = run("validate", path, exit_code=None)
    assert result.exit_code in (0, 1), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "internal-check-error" not in result.stdout


def _no_total_tokens(tmp_path: Path, n: int = 5) -> Path:
    usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    rows = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None
    for i in range(n):
        rows.append(
            {"type": "message", "id": f"u{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
             "message": {"role": "user", "content": "hi", "timestamp": 1}}
        )  # fmt: skip
        rows.append(
            {"type": "message", "id": f"a{i}", "parentId": f"u{i}", "timestamp": "2026-01-01T00:00:01.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "anthropic-messages",
                         "provider": "anthropic", "model": "claude", "stopReason": "stop", "timestamp": 2,
                         "usage": usage}}
        )  # fmt: skip
        parent = f"a{i}"
    file = tmp_path / "nott.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return file


def test_what_pi_tolerates_is_info_and_identical_findings_are_grouped(run, tmp_path: Path) -> None:
    file = _no_total_tokens(tmp_path)
    human = run("validate", file, "--strict").stdout  # info never fails, even with --strict
    lines = human.splitlines()
    assert len(lines) == 2, human
    assert "info tolerated-missing-field `message.usage.totalTokens` is missing; Pi copes" in lines[0]
    assert lines[0].endswith("(5×, lines 3–11)")
    data = json.loads(run("validate", file, "--format", "json").stdout)
    assert [f["line"] for f in data["files"][0]["findings"]] == [3, 5, 7, 9, 11]  # JSON keeps every instance
    assert len(run("validate", file, "--format", "github").stdout.splitlines()) == 6


def test_list_codes_and_explain(run) -> None:
    from pitools.core.validate import CODES

    listed = run("validate", "--list-codes").stdout
    assert all(code in listed for code in CODES)
    assert "info: Pi tolerates it" in listed
    explained = run("validate", "--explain", "orphan-entry").stdout
    assert "what Pi does:" in explained and "how to fix it:" in explained and "parentId" in explained
    # The reason for the grade is Pi's own behaviour, for this code in particular.
    assert "path walk stops at the missing parent" in explained and "why error:" in explained
    unanswered = json.loads(run("validate", "--explain", "tool-call-unanswered", "--format", "json").stdout)
    assert unanswered["severity"] == "info" and "No result provided" in unanswered["piBehaviour"]
    assert unanswered["grading"].startswith("Pi tolerates it")
    data = json.loads(run("validate", "--explain", "needs-migration", "--format", "json").stdout)
    assert data["severity"] == "info" and "pitools migrate" in data["fix"]
    assert len(json.loads(run("validate", "--list-codes", "--format", "json").stdout)) == len(CODES)
    bad = run("validate", "--explain", "orphan", exit_code=2)
    assert "did you mean 'orphan-entry'?" in bad.stderr
    run("validate", exit_code=2)


def test_select_bogus_names_the_valid_codes(run) -> None:
    r = run("validate", "x.jsonl", "--select", "dupe-id", exit_code=2)
    assert "did you mean 'duplicate-id'?" in r.stderr and "valid codes: unreadable-file" in r.stderr


def test_for_model_reads_models_json_unless_no_config(run: Any, tmp_path: Path) -> None:
    """``--no-config`` on validate as on request and heal: the agent folder's models.json names a
    model the catalogue lacks; with the flag it is an unknown model (one line, exit 1)."""
    agent = tmp_path / "agent"
    agent.mkdir()
    provider = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "x",
                "models": [{"id": "m1", "contextWindow": 100000, "maxTokens": 4096}]}  # fmt: skip
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}), encoding="utf-8")
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    session = support.golden_session("seed-running-example")
    with_config = run("validate", session, "--for-model", "local/m1", "--format", "json", env=env, exit_code=None)
    assert [c["model"] for c in json.loads(with_config.stdout)["requestChecks"]] == ["local/m1"]
    without = run("validate", session, "--for-model", "local/m1", "--no-config", env=env, exit_code=1)
    assert without.stderr.strip().splitlines() == [
        "pitools: --model local/m1: no such model in Pi's catalogue (unknown provider 'local')"
    ]
