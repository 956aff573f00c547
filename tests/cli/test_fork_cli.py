"""``pitools fork`` and ``pitools clone`` in a private Pi agent directory."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests import support

GOLDEN = support.GOLDEN
NAME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.jsonl"
)
Run = Callable[..., Result]  # the `run` fixture of tests/cli/conftest.py


@pytest.fixture
def pi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    folder = support.pi_project(tmp_path, monkeypatch, tmp_path / "repo")
    source = folder / "2026-07-29T09-00-00-000Z_S1.jsonl"
    shutil.copy(GOLDEN / "seed-running-example" / "session.jsonl", source)
    labels = folder / "2026-03-01T10-00-00-000Z_labels-source.jsonl"
    shutil.copy(GOLDEN / "clone-labels" / "source.jsonl", labels)
    os.utime(labels, (1_600_000_000, 1_600_000_000))  # S1 stays the most recent
    return {"folder": folder, "source": source, "labels": labels}


def _new_file(result: Result) -> Path:
    path = Path(result.stdout.strip())
    assert NAME.fullmatch(path.name), path.name
    return path


def test_clone_writes_next_to_the_source(run: Run, pi_home: dict[str, Any]) -> None:
    from pitools.core.session.load import load

    result = run("clone")  # no FILE: the most recent session here (S1)
    assert "using the most recent session" in result.stderr
    new = _new_file(result)
    assert new.parent == pi_home["folder"]
    loaded = load(new)
    header = loaded.session.header
    assert header["parentSession"] == str(pi_home["source"]) and header["version"] == 3 and header["cwd"] == "/repo"
    assert [e["id"] for e in loaded.session.entries] == [
        e["id"] for e in load(pi_home["source"]).index.get_branch("C1")
    ]


def test_clone_leaf_by_label_and_json(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "copy.jsonl"
    data = json.loads(run("clone", "labels-so", "--leaf", "A4", "-o", str(out), "--format", "json").stdout)
    assert data["path"] == str(out) and data["kind"] == "clone" and data["sourceLeaf"] == "A4"
    assert data["labelsRecreated"] == 3 and data["remappedFirstKeptEntryIds"] == ["C1"] and not data["piWouldDefer"]
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [e["type"] for e in lines[-3:]] == ["label"] * 3
    result = run(
        "clone",
        str(pi_home["labels"]),
        "--leaf",
        "set from the other branch",
        "-o",
        str(tmp_path / "u3.jsonl"),
    )
    assert "label(s) re-created" in result.stderr
    assert json.loads((tmp_path / "u3.jsonl").read_text(encoding="utf-8").splitlines()[5])["id"] == "U3"


def test_fork_prints_the_message_text(run: Run, pi_home: dict[str, Any]) -> None:
    from pitools.core.session.load import load

    result = run("fork", "S1", "--at", "U3")
    new = _new_file(result)
    assert "forked before user message U3" in result.stderr and "补充测试" in result.stderr
    assert load(new).session.entries[-1]["id"] == "A4"


def test_fork_json_and_first_message(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    data = json.loads(run("fork", "S1", "--at", "U1", "--format", "json", "-o", str(tmp_path / "f.jsonl")).stdout)
    assert data["selectedText"] == "检查认证实现" and data["entryCount"] == 0 and data["piWouldDefer"]
    assert (tmp_path / "f.jsonl").read_text(encoding="utf-8").count("\n") == 1
    result = run("fork", "S1", "--at", "U1", "-o", str(tmp_path / "g.jsonl"))
    assert "Pi itself writes such a file only once" in result.stderr


def test_fork_errors(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    assert "not a user message" in run("fork", "S1", "--at", "A3", exit_code=1).stderr
    assert "--at 'zz' matches no entry" in run("fork", "S1", "--at", "zz", exit_code=1).stderr
    assert "Missing option '--at'" in run("fork", "S1", exit_code=2).stderr
    run("clone", "S1", "-o", str(tmp_path / "x.jsonl"))
    assert "already exists" in run("clone", "S1", "-o", str(tmp_path / "x.jsonl"), exit_code=1).stderr
    assert "no session file, session id or id prefix" in run("clone", "nothing-like-this", exit_code=1).stderr


def test_configured_session_dir_receives_the_new_file(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    result = run("clone", str(pi_home["source"]), "--session-dir", str(shared))
    assert _new_file(result).parent == shared


def _finding_codes(run: Run, path: Path) -> set[str]:
    data = json.loads(run("validate", "--format", "json", path, exit_code=None).stdout)
    return {f["code"] for item in data["files"] for f in item["findings"]}


#: Findings a one-branch copy may add, exactly as Pi's own /fork and /clone would: references into
#: branches that were left behind (a branch summary's fromId, a context edit's target, a tool call
#: answered only on another branch). Re-created labels keep their older timestamps, as Pi writes
#: them, and validate does not flag that (test_clone_of_the_sample_is_what_pi_writes).
ONE_BRANCH_FINDINGS = {
    "branch-summary-missing-from",
    "context-edit-missing-target",
    "tool-call-unanswered",
}


def test_forks_and_clones_add_no_validation_findings(run: Run) -> None:
    """`pitools validate` finds nothing new in a golden fork or clone beyond one-branch effects."""
    from tests.golden.fork_cases import CASES, source_path

    for case in CASES:
        new = _finding_codes(run, GOLDEN / case.name / "session.jsonl")
        assert new - _finding_codes(run, source_path(case)) <= ONE_BRANCH_FINDINGS, case.name
        assert not new & {"duplicate-id", "orphan-entry", "parent-cycle", "needs-migration"}, case.name


# -- a hostile repository (issue 12): its .pi/settings.json must not decide where pitools writes --------


def test_untrusted_project_session_dir_is_ignored(run: Run, pi_home: dict[str, Any], tmp_path: Path) -> None:
    evil = tmp_path / "attacker-chosen"
    (Path.cwd() / ".pi").mkdir()
    (Path.cwd() / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": str(evil)}))
    result = run("clone", str(pi_home["source"]))
    assert _new_file(result).parent == pi_home["folder"]  # next to the source, as without the setting
    assert "not trusted" in result.stderr
    assert not evil.exists()  # nothing created either
    listing = json.loads(run("ls", "--format", "json").stdout)
    assert listing["sessionDirSource"] == "default"


def test_trusted_project_session_dir_is_used_but_never_created(
    run: Run, pi_home: dict[str, Any], tmp_path: Path
) -> None:
    shared = tmp_path / "team-sessions"
    (Path.cwd() / ".pi").mkdir()
    (Path.cwd() / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": str(shared)}))
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "trust.json").write_text(json.dumps({str(Path.cwd()): True}))
    result = run("clone", str(pi_home["source"]), exit_code=1)
    assert "does not exist" in result.stderr and not shared.exists()
    shared.mkdir()
    assert _new_file(run("clone", str(pi_home["source"]))).parent == shared


def _without_new_ids(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with what each run makes afresh left out: the header, and the label ids (and
    the parentId of a label that follows another)."""
    labels = {e["id"] for e in lines if e.get("type") == "label"}
    out = []
    for entry in lines[1:]:
        entry = dict(entry)
        if entry.get("type") == "label":
            entry.pop("id")
        if entry.get("parentId") in labels:
            entry["parentId"] = "<label>"
        out.append(entry)
    return out


def test_clone_of_the_sample_is_what_pi_writes(run: Run, tmp_path: Path) -> None:
    """The sample's label is re-created after the copied path with the time it was set, as Pi's
    createBranchedSession writes it; validate finds nothing in the clone (it used to report
    timestamp-backwards for that label), nor in the file Pi itself writes."""
    import subprocess

    sample = support.ROOT / "examples" / "sample-session.jsonl"
    clone = tmp_path / "clone.jsonl"
    run("clone", sample, "-o", clone)
    ours = [json.loads(line) for line in clone.read_text(encoding="utf-8").splitlines()]
    source = {e["id"]: e for e in map(json.loads, sample.read_text(encoding="utf-8").splitlines()[1:])}
    label = ours[-1]
    assert label["type"] == "label" and label["parentId"] == ours[-2]["id"]
    original = next(e for e in source.values() if e["type"] == "label" and e["targetId"] == label["targetId"])
    assert label["timestamp"] == original["timestamp"] < ours[-2]["timestamp"]
    assert _finding_codes(run, clone) == set()
    assert _finding_codes(run, sample) == set()

    node, pi = support.node(), support.pi_ref_dir()
    if node is None or pi is None:
        pytest.skip("needs node and the Pi reference for Pi's own clone")
    pi_clone = tmp_path / "pi-clone.jsonl"
    written = subprocess.run(
        [node, str(support.ROOT / "scripts" / "pi_clone.mjs"), str(sample)],
        capture_output=True,
        check=True,
        timeout=120,
        env={**os.environ, "PI_REF_DIR": str(pi)},
    )
    pi_clone.write_bytes(written.stdout)
    theirs = [json.loads(line) for line in written.stdout.decode("utf-8").splitlines()]
    assert _without_new_ids(theirs) == _without_new_ids(ours)
    assert _finding_codes(run, pi_clone) == set()
