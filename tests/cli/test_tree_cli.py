"""pitools tree: every filter in both formats, the JSON shape, snapshots, huge and broken sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests import support
from tests.golden.test_conformance import GOLDEN, load_recording

ROOT = support.ROOT
SEED = GOLDEN / "seed-running-example" / "session.jsonl"
GEN = GOLDEN / "gen-s0026_v3" / "session.jsonl"
SCHEMA = json.loads((ROOT / "schemas" / "output" / "tree.schema.json").read_text())
FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"]
# Fixed width, no colour, and a HOME that shortens no path, so output is the same everywhere.
ENV = {"PITOOLS_WIDTH": "100", "HOME": "/nonexistent", "NO_COLOR": "1"}


def tree_json(run, path: Path, *args: str) -> dict[str, Any]:
    data = json.loads(run("tree", path, "--format", "json", *args, env=ENV).stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def walk(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of the JSON tree in display order (iteratively)."""
    out: list[dict[str, Any]] = []
    stack = list(reversed(data["roots"]))
    while stack:
        node = stack.pop()
        out.append(node)
        out.extend(node["chain"])
        stack.extend(reversed(node["children"]))
    return out


@pytest.mark.parametrize("filter_", FILTERS)
def test_seed_human_per_filter(run, snapshot, filter_: str) -> None:
    r = run("tree", SEED, "--filter", filter_, "--color", "never", env=ENV)
    assert r.stderr == ""
    assert r.stdout == snapshot


@pytest.mark.parametrize("filter_", FILTERS)
def test_seed_json_per_filter(run, filter_: str) -> None:
    data = tree_json(run, SEED, "--filter", filter_)
    assert data["filter"] == filter_ and data["leafId"] == "C1" and data["entryCount"] == 14
    nodes = walk(data)
    assert data["shownCount"] == len(nodes)
    assert all(n["isLeaf"] == (n["id"] == "C1") for n in nodes)
    pi_ids = {n["id"] for n in load_recording("seed-running-example", 20000)["tree"]}
    assert {n["id"] for n in nodes} <= pi_ids


def test_seed_json_shape(run) -> None:
    data = tree_json(run, SEED)
    assert data["sessionName"] is None and data["revisits"] == 0 and data["unreachable"] == []
    [root] = data["roots"]
    assert root["id"] == "U1" and root["role"] == "user" and root["preview"] == "user: 检查认证实现"
    assert [n["id"] for n in root["chain"]] == ["T1", "A2"]  # A1 (a bare tool call) is hidden
    assert all("chain" not in n and "children" not in n for n in root["chain"])
    bs1, u2 = root["children"]  # the fork at A2: the leaf's branch first
    assert (bs1["id"], bs1["type"], bs1["onPath"]) == ("BS1", "branch_summary", True)
    assert [n["id"] for n in bs1["chain"]] == ["U2B", "A4", "U3", "A5", "U4", "A6", "C1"]
    assert bs1["chain"][-1] | {"isLeaf": True} == bs1["chain"][-1] and bs1["children"] == []
    assert bs1["chain"][-1]["preview"] == "[compaction: 115k tokens]"
    assert (u2["id"], u2["onPath"], [n["id"] for n in u2["chain"]], u2["children"]) == ("U2", False, ["A3"], [])


def test_leaf_option_moves_the_markers(run) -> None:
    data = tree_json(run, SEED, "--leaf", "A3")
    nodes = {n["id"]: n for n in walk(data)}
    assert data["leafId"] == "A3" and nodes["A3"]["isLeaf"] and not nodes["C1"]["isLeaf"]
    assert [n["id"] for n in walk(data) if n["onPath"]] == ["U1", "T1", "A2", "U2", "A3"]
    assert [c["id"] for c in data["roots"][0]["children"]] == ["U2", "BS1"]
    human = run("tree", SEED, "--leaf", "A3", "--color", "never", env=ENV).stdout
    assert "leaf A3 (--leaf)" in human
    assert [line.split()[0] for line in human.splitlines() if "›" in line] == ["A3"]


def test_unknown_leaf_and_bad_filter(run) -> None:
    r = run("tree", SEED, "--leaf", "nope", exit_code=1)
    assert r.stdout == "" and r.stderr.startswith("pitools: ") and len(r.stderr.splitlines()) == 1
    r = run("tree", SEED, "--filter", "tools", exit_code=2)
    assert "Invalid value for '--filter'" in r.stderr


def test_not_a_session_is_one_line(run) -> None:
    r = run("tree", GOLDEN / "broken-missing-header" / "session.jsonl", exit_code=1)
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr


def test_generated_session_human(run, snapshot) -> None:
    r = run("tree", GEN, "--color", "never", env={**ENV, "PITOOLS_WIDTH": "120"})
    assert r.stdout.splitlines()[0] == "Session tree · multi line"  # the name's newline is flattened
    assert r.stdout == snapshot


@pytest.mark.parametrize("filter_", FILTERS)
def test_generated_session_json(run, filter_: str) -> None:
    data = tree_json(run, GEN, "--filter", filter_)
    nodes = walk(data)
    assert data["sessionName"] == "multi\nline"
    assert len(nodes) == data["shownCount"] == len({n["id"] for n in nodes})
    if filter_ == "labeled-only":
        # Two entries are labelled, but one is a tool-call-only assistant turn: Pi hides it anyway.
        assert [(n["id"], n["label"]) for n in nodes] == [("28d2bfee", "checkpoint")]
    if filter_ == "user-only":
        assert {n["role"] for n in nodes} == {"user"}


def test_ids_column_and_colour(run) -> None:
    plain = run("tree", SEED, "--no-ids", "--color", "never", env=ENV).stdout
    assert plain.splitlines()[2] == "  • user: 检查认证实现"
    coloured = run("tree", SEED, "--color", "always", env={"PITOOLS_WIDTH": "100"}).stdout
    assert "\x1b[" in coloured
    assert coloured.count("\n") == plain.count("\n")


def test_markup_in_session_text_is_literal(run, tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}
    entries = [
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": "[bold red]not markup[/] and \x1b[31mescape"},
        },
        {
            "type": "label",
            "id": "l1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02Z",
            "targetId": "u1",
            "label": "[link=x]lab[/link]",
        },
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(json.dumps(e) for e in [header, *entries]) + "\n")
    out = run("tree", p, "--color", "never", env=ENV).stdout
    # Markup stays literal; the escape sequence is shown escaped (output layer), never raw.
    assert "[[link=x]lab[/link]] user: [bold red]not markup[/] and \\x1b[31mescape" in out
    assert "\x1b" not in out


def test_long_lines_are_cut_with_a_marker(run) -> None:
    out = run("tree", GEN, "--color", "never", env={**ENV, "PITOOLS_WIDTH": "60"}).stdout
    from rich.cells import cell_len

    assert all(cell_len(line) <= 60 for line in out.splitlines())
    assert any(line.endswith("…") for line in out.splitlines())


# -- broken files ----------------------------------------------------------------------------------


def test_cycle_session_does_not_hang(run) -> None:
    path = GOLDEN / "broken-cycle" / "session.jsonl"
    r = run("tree", path, "--color", "never", env=ENV)
    assert "No entries found" in r.stdout
    assert "8 entries in or below a parentId cycle" in r.stdout
    data = tree_json(run, path)
    assert data["roots"] == [] and len(data["unreachable"]) == 8


@pytest.mark.parametrize(
    "case",
    ["broken-duplicate-ids", "gen-s0021_broken-garbagefirst+secondheader+dupidcycle", "gen-s0013_broken-orphan+dupids"],
)
@pytest.mark.parametrize("filter_", ["default", "all"])
def test_duplicate_ids_do_not_hang(run, case: str, filter_: str) -> None:
    # Pi's own getTree loops forever on these files (the oracle timed out recording them).
    path = GOLDEN / case / "session.jsonl"
    r = run("tree", path, "--filter", filter_, "--color", "never", env=ENV)
    assert "Traceback" not in r.stderr
    data = tree_json(run, path, "--filter", filter_)
    assert data["revisits"] >= 1
    assert "reached twice" in r.stdout


@pytest.mark.slow
def test_hundred_thousand_entry_chain(run, tmp_path: Path) -> None:
    n = 100_000
    p = tmp_path / "big.jsonl"
    with p.open("w") as f:
        f.write('{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}\n')
        parent = "null"
        for i in range(n):
            body = (
                f'"role":"user","content":"q{i}"'
                if i % 2 == 0
                else f'"role":"assistant","content":[{{"type":"text","text":"a{i}"}}]'
            )
            f.write(
                f'{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2026-01-01T00:00:01Z","message":{{{body}}}}}\n'
            )
            parent = f'"e{i}"'
    human = run("tree", p, "--color", "never", env=ENV).stdout.splitlines()
    assert len(human) == n + 2
    assert human[2] == "e0       • user: q0"  # no indentation anywhere in a linear run
    assert human[-1] == f"e{n - 1} › • assistant: a{n - 1}"
    raw = run("tree", p, "--format", "json", env=ENV).stdout
    data = json.loads(raw)  # the stdlib parser's nesting limit is far away: one run, one chain
    [root] = data["roots"]
    assert len(root["chain"]) == n - 1 and root["children"] == []


def test_hostile_values_do_not_crash(run, tmp_path: Path) -> None:
    deep: Any = "x"
    for _ in range(700):
        deep = [deep]
    header = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}
    entries = [
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": deep,
            "message": {"role": "user", "content": "x"},
        },
        {"type": {"x": 1}, "id": "b", "parentId": "a"},
        {"type": "label", "id": "l", "parentId": "b", "targetId": "a", "label": deep},
        {"type": "model_change", "id": "m", "parentId": "l", "modelId": deep},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(json.dumps(e) for e in [header, *entries]) + "\n")
    for filter_ in FILTERS:
        run("tree", p, "--filter", filter_, "--color", "never", env=ENV)
        data = tree_json(run, p, "--filter", filter_)
        for node in walk(data):
            assert node.get("label", "") in ("", "[value nested more than 100 levels deep]")
    out = run("tree", p, "--filter", "all", "--color", "never", env=ENV).stdout
    assert "[model: [nested value]]" in out
    for fmt in ("human", "json"):
        run("branches", p, "--format", fmt, env=ENV)
