"""Property tests and the volume fuzz loop for the core: loader, migration, tree, projection, planner.

Every input goes through :func:`tests.fuzz.support.exercise_core`, which runs what the commands
run (load, migrate, index, tree, context at several leaves, compaction plan, inspect, validate,
tree views) and allows only :class:`~pitools.errors.PitoolsError` to escape, under a watchdog.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import support
from tests.fuzz.support import (
    SEED,
    SWEEP_EXAMPLES,
    VOLUME_EXAMPLES,
    hypothesis_settings,
    run_core,
    seed_sessions,
)

SEEDS = seed_sessions()
SEED_NAMES = [name for name, _ in SEEDS]

# -- strategies --------------------------------------------------------------------------------------

ids = st.sampled_from(["a", "b", "c", "00000001", "00000002", "", "S"]) | st.none() | st.integers(-1, 3)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
roles = st.sampled_from(support.ROLES) | json_scalars
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "toolCall", "image", "redactedThinking", "x"])},
    optional={
        "text": json_values,
        "thinking": json_values,
        "name": st.sampled_from(["read", "edit", "write", "bash"]) | json_scalars,
        "arguments": json_values | st.fixed_dictionaries({"path": json_values}),
        "id": json_values,
    },
)
messages = st.fixed_dictionaries(
    {"role": roles},
    optional={
        "content": json_values | st.lists(blocks, max_size=4) | st.text(max_size=50),
        "usage": json_values
        | st.fixed_dictionaries({k: st.integers(-5, 10**6) | json_scalars for k in ("input", "output", "totalTokens")}),
        "stopReason": st.sampled_from(["stop", "toolUse", "aborted", "error"]) | json_scalars,
        "summary": json_values,
        "command": json_values,
        "output": json_values,
        "sections": json_values,
        "toolsAdded": json_values,
        "nestedCalls": json_values,
    },
)
entries = st.fixed_dictionaries(
    {"type": st.sampled_from(support.ENTRY_TYPES) | json_scalars, "id": ids, "parentId": ids},
    optional={
        "timestamp": st.sampled_from(["2026-01-01T00:00:00Z", "2025-02-30", "x", ""]) | json_scalars,
        "message": messages | json_values,
        "summary": json_values,
        "firstKeptEntryId": ids,
        "firstKeptEntryIndex": json_values,
        "targetId": ids,
        "replacement": json_values | st.fixed_dictionaries({"content": json_values}),
        "label": json_values,
        "fromId": ids,
        "thinkingLevel": json_values,
        "provider": json_values,
        "modelId": json_values,
        "details": json_values,
        "systemMessage": messages | json_values,
    },
)
headers = st.fixed_dictionaries(
    {"type": st.just("session"), "id": st.text(max_size=10) | json_scalars},
    optional={"version": st.sampled_from([1, 2, 3, "3", "x", None, 2.5]), "cwd": json_values},
)


def _line(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"


session_texts = st.builds(
    lambda header, body, junk: b"".join([_line(header), *[_line(e) for e in body], *junk]),
    headers,
    st.lists(entries, max_size=12),
    st.lists(st.binary(max_size=30).map(lambda b: b + b"\n"), max_size=2),
)


# -- property tests ---------------------------------------------------------------------------------


@hypothesis_settings()
@given(data=st.binary(max_size=3000))
def test_arbitrary_bytes_are_only_diagnostics(data: bytes, scratch: Path) -> None:
    run_core(data, scratch, "bytes")


@pytest.mark.slow
@hypothesis_settings()
@given(data=session_texts)
def test_generated_sessions(data: bytes, scratch: Path) -> None:
    run_core(data, scratch, "generated")


@pytest.mark.slow
@hypothesis_settings()
@given(name=st.sampled_from(SEED_NAMES), seed=st.integers(0, 2**32 - 1))
def test_mutated_golden_sessions(name: str, seed: int, scratch: Path) -> None:
    lines = dict(SEEDS)[name]
    rng = random.Random(seed)
    run_core(support.mutate_lines(rng, lines), scratch, "mutated", rng)


@pytest.mark.slow
@hypothesis_settings()
@given(name=st.sampled_from(SEED_NAMES), cut=st.floats(0, 1))
def test_truncated_golden_sessions(name: str, cut: float, scratch: Path) -> None:
    data = b"".join(dict(SEEDS)[name])
    run_core(data[: int(len(data) * cut)], scratch, "truncated")


def _field_sweep() -> list[tuple[str, int, tuple[object, ...], object]]:
    """(seed, line, field path, wrong value) for every field of every line of a few seeds."""
    values = [None, True, 0, -1, 2**64, 1.5, "", "x", [], [None], {}, {"a": None}, support.LONE_SURROGATE]
    combos = []
    for name, lines in SEEDS[:12]:
        for k, line in enumerate(lines[:25]):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            for path in support._paths(obj):
                for value in values:
                    combos.append((name, k, path, value))
    return combos


@pytest.mark.slow
def test_wrong_type_in_every_field(scratch: Path) -> None:
    """Each field of each line replaced by each wrong type (all of them under ``make fuzz``)."""
    combos = _field_sweep()
    count = min(len(combos), SWEEP_EXAMPLES)
    rng = random.Random(SEED)
    for name, k, path, value in rng.sample(combos, count):
        lines = list(dict(SEEDS)[name])
        obj = json.loads(lines[k])
        support._set(obj, path, value)
        lines[k] = support.to_line(obj)
        run_core(b"".join(lines), scratch, "field-sweep")


@pytest.mark.slow
def test_volume_fuzz_loop(scratch: Path) -> None:
    """Mutated sessions straight through the core (half the budget), without hypothesis overhead."""
    rng = random.Random(SEED)
    for _ in range(VOLUME_EXAMPLES):
        _name, lines = rng.choice(SEEDS)
        run_core(support.mutate_lines(rng, lines), scratch, "volume", rng)


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.parametrize("path", support.full_golden(), ids=lambda p: p.parent.name)
def test_every_golden_session_passes_the_core(path: Path, scratch: Path) -> None:
    run_core(path.read_bytes(), scratch, "golden")
