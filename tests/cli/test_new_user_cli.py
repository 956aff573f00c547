"""Issue 28: what a new user tripped on. One vocabulary for FILE, numbers and forks; clear exits."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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


# -- usage/search: dates pitools cannot read and reversed ranges are usage errors -------------------


def _pitools(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed entry point as a user runs it (usage/search/ls go through the click-free fast path)."""
    return subprocess.run([sys.executable, "-m", "pitools", *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("command", ["usage", "search"])
def test_an_unreadable_date_is_exit_2_with_the_accepted_forms(run, agent: Path, command: str) -> None:
    query = ["fix"] if command == "search" else []
    for result in (
        run(command, *query, "--since", "last month", exit_code=2),
        _pitools(command, *query, "--since", "last month"),
    ):
        err = result.stderr
        assert getattr(result, "exit_code", getattr(result, "returncode", None)) == 2
        assert "--since: cannot read the time 'last month'" in err
        assert "2026-03-01" in err and "2026-03" in err and "7d" in err


@pytest.mark.parametrize("command", ["usage", "search"])
def test_a_reversed_range_is_exit_2_saying_why(run, agent: Path, command: str) -> None:
    query = ["fix"] if command == "search" else []
    r = run(command, *query, "--since", "2026-12", "--until", "2026-11", exit_code=2)
    assert "--since 2026-12 is not before --until 2026-11" in r.stderr
    p = _pitools(command, *query, "--since", "2026-12", "--until", "2026-11")
    assert p.returncode == 2 and p.stdout == "" and "not before" in p.stderr
    # The same month on both ends is one whole month, not a reversed range.
    assert "1 session" in run("usage", "--since", "2026-03", "--until", "2026-03").stdout


# -- search: a quoted phrase matches as written ------------------------------------------------------


def test_a_quoted_phrase_matches_whole_words_as_written(run, agent: Path) -> None:
    last = json.loads(agent.read_text(encoding="utf-8").splitlines()[-1])
    entry = {
        "type": "message",
        "id": "feed0001",
        "parentId": last["id"],
        "timestamp": "2026-03-14T10:00:00.000Z",
        "message": {"role": "user", "content": "The severity in tool output is wrong", "timestamp": 1773482400000},
    }
    with agent.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")

    def ids(query: str) -> list[str]:
        return [h["entryId"] for h in json.loads(run("search", query, "--format", "json").stdout)["hits"]]

    assert ids("Severity in to") == ["feed0001"]  # plain words match at the start of a word
    assert ids('"Severity in to"') == []  # a phrase ends where a word ends: "tool" is not "to"
    assert ids('"Severity in tool"') == ["feed0001"]
    assert ids('"SEVERITY   in tool"') == ["feed0001"]  # case and whitespace still do not matter
    for query in ('"Severity in to"', '"Severity in tool"'):  # the click-free fast path agrees
        p = _pitools("search", query, "--format", "json")
        assert p.returncode == 0, p.stderr
        assert [h["entryId"] for h in json.loads(p.stdout)["hits"]] == ids(query)


# -- writers say what they wrote and what they did not ------------------------------------------------

GOLDEN = support.ROOT / "golden"


def test_slim_in_place_says_a_backup_is_kept_and_its_size(run, tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copy(GOLDEN / "slim-images" / "original.jsonl", target)
    size = target.stat().st_size
    out = run("slim", target, "--images", "--in-place").stdout
    (backup,) = [p for p in tmp_path.iterdir() if ".bak-" in p.name]
    assert backup.stat().st_size == size
    from pitools.render.vocab import size as fmt

    assert f"backup kept: {backup} ({fmt(size)}, the whole original): no disk space is freed" in out
    assert "--no-backup" in out


def test_slim_no_backup_writes_atomically_and_keeps_none(run, tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copy(GOLDEN / "slim-images" / "original.jsonl", target)
    before = target.stat().st_size
    out = run("slim", target, "--images", "--in-place", "--no-backup").stdout
    assert "no backup kept (--no-backup)" in out
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"] and target.stat().st_size < before
    run("validate", target)  # Pi still loads it
    run("slim", target, "--images", "--no-backup", "-o", tmp_path / "x.jsonl", exit_code=2)


def test_repair_exit_1_says_what_was_written_and_what_remains(run, tmp_path: Path) -> None:
    out = tmp_path / "fixed.jsonl"
    r = run("repair", GOLDEN / "repair-torn-fused" / "session.jsonl", "-o", out, exit_code=1)
    assert out.exists()
    assert r.stderr.endswith(f"exit 1: 1 fix written to {out}, but 1 problem remains (under 'not fixed')\n")
    dry = run("repair", GOLDEN / "repair-torn-fused" / "session.jsonl", "--dry-run", exit_code=1)
    assert "nothing written (1 fix would be made)" in dry.stderr
    only = run("repair", GOLDEN / "repair-orphan" / "session.jsonl", "--dry-run", exit_code=1)
    assert "repair has no fix for them; nothing written" in only.stderr
    run("repair", GOLDEN / "repair-torn-fused" / "session.jsonl", "--reattach", "-o", tmp_path / "ok.jsonl")


def test_dataset_exit_1_names_what_was_skipped_and_that_the_rest_was_written(run, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(SAMPLE, src / "good.jsonl")
    (src / "notes.jsonl").write_text('{"hello": 1}\n', encoding="utf-8")
    r = run("dataset", src, "-o", tmp_path / "out", "--format", "jsonl", exit_code=1)
    assert "notes.jsonl: skipped" in r.stderr
    assert "exit 1: 1 input file not in the dataset (listed above); every other session was written" in r.stderr
    assert (tmp_path / "out" / "sessions").is_dir()
    again = run("dataset", src, "-o", tmp_path / "out", "--format", "jsonl", exit_code=1)
    assert "1 session in" in again.stderr and "1 unchanged" in again.stderr


# -- one rule for sizes, costs and token counts ------------------------------------------------------


def test_units_follow_one_rule() -> None:
    from pitools.render.vocab import money, size, tokens_short

    assert [size(v) for v in (0, 999, 1000, 75_000_000, 71_600_000 * 1.048576, 2_500_000_000)] == [
        "0 B",
        "999 B",
        "1.0 KB",
        "75.0 MB",
        "75.1 MB",
        "2.5 GB",
    ]
    assert [money(v) for v in (1094.9053, 0.08, 0.004, 0, 1234567.891, None)] == [
        "$1,094.91",
        "$0.08",
        "<$0.01",
        "$0.00",
        "$1,234,567.89",
        "?",
    ]
    assert [tokens_short(v) for v in (812, 105_500, 1_300_000)] == ["812", "105.5k", "1.3M"]


def test_every_renderer_writes_sizes_and_costs_the_same_way(run, agent: Path, tmp_path: Path) -> None:
    from pitools.render.vocab import money, size

    nbytes = agent.stat().st_size
    cost = json.loads(run("inspect", agent, "--format", "json").stdout)["stats"]["cost"]
    inspect = run("inspect", agent).stdout
    ls = run("ls").stdout
    usage = run("usage").stdout
    assert f"cost {money(cost)};" in inspect
    for text in (ls, usage):
        assert f" {money(cost)} " in text or text.rstrip().endswith(money(cost)) or f" {money(cost)}\n" in text
    assert f" {size(nbytes)} " in ls
    slim = run("slim", agent, "--images", "--dry-run").stdout
    assert f"({size(nbytes)})" in slim
    compact = run("compact", agent, "--dry-run").stdout
    assert not re.search(r"~\d{4,}", compact)  # token counts carry separators


# -- a session Pi cannot build: say where Pi throws, still show the totals ----------------------------


@pytest.fixture
def crash_leaf(tmp_path: Path) -> Path:
    """golden repair-crash-no-message cut after its line 5: a message entry without a message, as leaf."""
    lines = (GOLDEN / "repair-crash-no-message" / "session.jsonl").read_text(encoding="utf-8").splitlines(True)
    target = tmp_path / "crash.jsonl"
    target.write_text("".join(lines[:5]), encoding="utf-8")
    assert '"id":"8170c670"' in lines[4] and '"message":' not in lines[4]
    return target


def test_inspect_names_file_line_and_entry_where_pi_throws_and_keeps_the_totals(run) -> None:
    path = GOLDEN / "repair-crash-no-message" / "session.jsonl"
    out = run("inspect", path, env={"COLUMNS": "400"}).stdout
    assert f"Pi 1.6.0 throws on {path}:5 (entry 8170c670) in getSessionStats" in out
    assert "buildSessionContext" in out and "TypeError: Cannot read properties of undefined (reading 'role')" in out
    assert re.search(r"usage +[\d,]+ tokens .*cost \$[\d,]+\.\d\d", out)
    data = json.loads(run("inspect", path, "--format", "json").stdout)
    at = data["stats"]["piErrorAt"]
    assert at["line"] == 5 and at["entryId"] == "8170c670" and "buildSessionContext" in at["functions"]
    assert data["stats"]["totalMessages"] > 0 and data["stats"]["tokens"]["total"] > 0
    import jsonschema

    schema = json.loads((support.ROOT / "schemas" / "output" / "inspect.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)


def test_branches_never_prints_none_for_a_message_without_a_message(run, crash_leaf: Path) -> None:
    out = run("branches", crash_leaf).stdout
    assert "None" not in out
    assert "leaf: message: [message without a message]" in out
    assert "None" not in run("inspect", crash_leaf).stdout


# -- dataset: project keeps the full cwd, with the short name beside it -------------------------------


def test_dataset_project_keeps_the_full_cwd_so_same_named_projects_stay_apart(run, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    for who, sid in (("dev", "0195f2a4-0000-7000-8000-000000000001"), ("sam", "0195f2a4-0000-7000-8000-000000000002")):
        header = json.loads(lines[0]) | {"id": sid, "cwd": f"/home/{who}/src/timekeeper"}
        (src / f"{who}.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    out = tmp_path / "out"
    run("dataset", src, "-o", out, "--format", "jsonl")

    def rows_of(table: str) -> list[dict[str, object]]:
        files = sorted((out / table).glob("*.jsonl"))
        return [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines()]

    rows = rows_of("sessions")
    assert sorted((r["project"], r["project_name"]) for r in rows) == [
        ("/home/dev/src/timekeeper", "timekeeper"),
        ("/home/sam/src/timekeeper", "timekeeper"),
    ]
    usage = rows_of("usage")
    assert usage and {r["project"] for r in usage} == {"/home/dev/src/timekeeper", "/home/sam/src/timekeeper"}
    assert {r["project_name"] for r in usage} == {"timekeeper"}


# -- a fork's numbers: own vs copied from the parent, the same words in inspect, ls and usage ----------


def _validate(name: str, data: object) -> None:
    import jsonschema

    schema = json.loads((support.ROOT / "schemas" / "output" / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A generated agent folder: one session with usage, and a fork of it that goes on."""
    from tests.archive_gen import Archive, private_pi_env

    private_pi_env(tmp_path, monkeypatch)
    monkeypatch.setenv("PITOOLS_WIDTH", "400")
    ar = Archive(tmp_path / "agent", seed=3)
    p = ar.new("/work/app")
    p.conversation(2)
    p.user("hostile \x1b[31mred\x1b[0m text")
    p.write()
    c = ar.fork(p, p.leaf)  # type: ignore[arg-type]
    c.conversation(1)
    c.write()
    return ar


SAME_WORDS = "copied from the parent"
COUNTED_ONCE = "history copied from a parent counted once, in the parent"


def test_a_forks_numbers_are_own_and_copied_everywhere(run, archive) -> None:
    parent, fork = archive.writers[0].path, archive.writers[1].path
    data = json.loads(run("inspect", fork, "--format", "json").stdout)
    _validate("inspect", data)
    split = data["fork"]
    assert split["copied"]["entries"] > 0 and split["own"]["entries"] > 0
    assert split["own"]["cost"] + split["copied"]["cost"] == pytest.approx(data["stats"]["cost"])
    assert split["own"]["tokens"] + split["copied"]["tokens"] == data["stats"]["tokens"]["total"]
    assert "fork" not in json.loads(run("inspect", parent, "--format", "json").stdout)
    from pitools.render.vocab import money

    human = run("inspect", fork).stdout
    assert f"own {split['own']['tokens']:,} tokens, {money(split['own']['cost'])}; {SAME_WORDS}" in human

    listing = json.loads(run("ls", "--all", "--format", "json").stdout)
    _validate("ls", listing)
    (row,) = [s for s in listing["sessions"] if s["path"] == str(fork)]
    assert row["copiedCost"] == pytest.approx(split["copied"]["cost"])
    assert listing["totals"]["copiedCost"] == pytest.approx(split["copied"]["cost"])
    table = run("ls", "--all").stdout
    assert " copied " in table.splitlines()[0] and f"{COUNTED_ONCE}: {money(row['copiedCost'])}" in table

    usage = run("usage").stdout
    assert COUNTED_ONCE in usage
    by_session = json.loads(run("usage", "--by", "session", "--format", "json").stdout)
    assert by_session["copiedHistory"]["cost"] == pytest.approx(split["copied"]["cost"])


def test_ls_tsv_has_fixed_columns_one_line_per_session(run, archive) -> None:
    lines = run("ls", "--all", "--format", "tsv").stdout.splitlines()
    from pitools.render.ls import TSV_COLUMNS

    assert lines[0].split("\t") == list(TSV_COLUMNS)
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == 2 and all(len(r) == len(TSV_COLUMNS) for r in rows)
    by_path = {r[TSV_COLUMNS.index("path")]: r for r in rows}
    fork = by_path[str(archive.writers[1].path)]
    assert float(fork[TSV_COLUMNS.index("copied_cost")]) > 0
    assert int(fork[TSV_COLUMNS.index("bytes")]) == archive.writers[1].path.stat().st_size
    assert "\x1b" not in "\n".join(lines)  # the hostile message is escaped, one line per session


@pytest.mark.parametrize("command", ["inspect", "context", "tree", "branches", "validate", "scan"])
def test_a_dot_slash_path_is_a_path_named_as_given(
    run, agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # `./none` holds a separator: a file that does not exist, never an id looked up as `none`.
    monkeypatch.chdir(tmp_path)
    r = run(command, "./none", exit_code=1)
    out = r.stderr + r.stdout
    assert "./none" in out and "id prefix matches" not in out


@pytest.mark.parametrize("name", ["adir", "adir/"])
@pytest.mark.parametrize("command", ["inspect", "context", "tree"])
def test_a_folder_is_refused_the_same_with_or_without_its_slash(
    run, agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    r = run(command, name, exit_code=2)
    assert f"'{name}' is a directory, not a session file" in r.stderr
