"""Every writer on sessions Pi still loads but whose shape is unusual (issue 40): garbage before
the header, a second header, a last line without newline (complete or torn), on top of the
mutation loop over the golden sessions.

Each of ``compact --apply``, ``navigate --summarize`` and ``heal --apply`` (in place and ``-o``), ``repair``,
``slim``, ``redact`` and ``migrate --in-place`` must exit 0 or 1 with at most one error line;
a refusal leaves the session byte for byte as it was; an append leaves a file Pi loads with the
new entry at its default leaf; a rewrite leaves a file that still loads.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import support
from tests.fuzz.support import CLI_EXAMPLES, hypothesis_settings

SEEDS = support.seed_sessions(max_lines=25)
SEED_NAMES = [name for name, _ in SEEDS]
SHAPES = ["garbage-first", "second-header", "unterminated", "torn-last", "crlf"]
BUILTIN = ["--model", "builtin", "--yes", "--no-config"]
#: heal's target: Anthropic refuses the most shapes (tool ids, foreign thinking, images), so the
#: fuzzed sessions give it the most to edit.
HEAL_MODEL = "anthropic/claude-sonnet-4-5"


def shaped(rng: random.Random, lines: list[bytes], shapes: list[str]) -> bytes:
    """``lines`` (maybe mutated) given each of ``shapes``."""
    data = support.mutate_lines(rng, lines, rounds=rng.randint(0, 2)) if rng.random() < 0.5 else b"".join(lines)
    if "crlf" in shapes:
        data = data.replace(b"\n", b"\r\n")
    if "second-header" in shapes:
        parts = data.splitlines(keepends=True)
        at = rng.randint(1, max(1, len(parts)))
        header = b'{"type":"session","version":3,"id":"second","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}\n'
        data = b"".join([*parts[:at], header, *parts[at:]])
    if "garbage-first" in shapes:
        data = rng.choice([b"this line is not json\n", b"\n", b"{\n", b"   \n"]) + data
    if "unterminated" in shapes:
        data = data.rstrip(b"\r\n")
    if "torn-last" in shapes:
        data = data + b'{"type":"message","id":"torn","parentId":"x'
    return data


def _entry_ids(path: Path) -> list[str]:
    from pitools.core.session.load import load

    try:
        loaded = load(str(path))
    except Exception:  # a session pitools refuses has no ids to offer
        return []
    return [e["id"] for e in loaded.session.entries if isinstance(e, dict) and isinstance(e.get("id"), str)]


def writer_invocations(file: Path, rng: random.Random) -> list[tuple[str, list[str]]]:
    ids = _entry_ids(file) or ["L2"]
    out = str(file) + ".out"
    to = rng.choice(ids)
    return [
        ("append", ["compact", str(file), "--apply", "--keep-recent-tokens", "300", *BUILTIN]),
        ("copy", ["compact", str(file), "--apply", "--keep-recent-tokens", "300", *BUILTIN, "-o", out]),
        ("append", ["navigate", str(file), "--to", to, "--summarize", "--label", "fz", *BUILTIN]),
        ("copy", ["navigate", str(file), "--to", to, "--summarize", *BUILTIN, "-o", out]),
        ("append", ["heal", str(file), "--for-model", HEAL_MODEL, "--apply", "--yes", "--no-config"]),
        ("copy", ["heal", str(file), "--for-model", HEAL_MODEL, "--no-config", "-o", out]),
        ("rewrite", ["repair", str(file), "--in-place"]),
        ("rewrite", ["slim", str(file), "--in-place", "--thinking"]),
        ("rewrite", ["redact", str(file), "--in-place", "--key", "fz", "--no-pi-keys"]),
        ("rewrite", ["migrate", str(file), "--in-place"]),
    ]


def check_writers(data: bytes, scratch: Path, rng: random.Random) -> None:
    from pitools.core.session.load import load

    for kind, args in writer_invocations(_write(scratch, data), rng):
        _write(scratch, data)
        out = Path(str(scratch) + ".out")
        out.unlink(missing_ok=True)
        for stale in scratch.parent.glob(scratch.name + ".bak-*"):
            stale.unlink()
        support.STATS.runs["cli-writers"] += 1
        rc, _stdout, err = support.run_cli_inprocess(args)
        problem = writer_problem(rc, err)
        where = f"`pitools {' '.join(args[:1] + args[2:])}`"
        if problem is not None:
            path = support.save_crash("cli-writers", data, f"{where}\nexit {rc}\n{err}")
            raise AssertionError(f"{where} on {path}: {problem}\n{err[-3000:]}")
        if rc != 0:
            assert scratch.read_bytes() == data, f"{where} refused but changed the file: {err}"
            assert not out.exists(), f"{where} refused but wrote {out}"
            continue
        if kind == "append" and scratch.read_bytes() != data:
            written = scratch.read_bytes()
            assert written.startswith(data) and written.endswith(b"\n"), f"{where}: not an append"
            loaded = load(str(scratch))
            assert loaded.leaf(None) == loaded.session.entries[-1]["id"], f"{where}: new entry is not Pi's leaf"
        elif kind == "copy" and out.exists():
            assert scratch.read_bytes() == data, f"{where}: -o touched the source"
            loaded = load(str(out))
            assert loaded.session.valid and loaded.leaf(None) == loaded.session.entries[-1]["id"], where
        elif kind == "rewrite":
            assert scratch.read_bytes() == data or load(str(scratch)).session.valid is not None


def writer_problem(rc: int | None, stderr: str) -> str | None:
    """A writer kept the promise (:func:`~tests.fuzz.support.promise_problem`; writers announce
    their model and progress, so any number of messages), a refusal giving its reason."""
    problem = support.promise_problem(rc, stderr)
    if problem is None and rc == 1 and not support.message_lines(stderr):
        return "a refusal without a reason"
    return problem


def _write(scratch: Path, data: bytes) -> Path:
    scratch.write_bytes(data)
    return scratch


def test_shapes_are_what_they_say() -> None:
    lines = dict(SEEDS)["gen-s0005_v3"]
    rng = random.Random(0)
    both = shaped(rng, lines, ["garbage-first", "second-header", "unterminated"])
    assert not both.endswith(b"\n") and b'"id":"second"' in both
    assert shaped(rng, lines, ["torn-last"]).endswith(b'"parentId":"x')


@pytest.mark.slow  # in-process writers, 8 per example: make fuzz and make check run it
@hypothesis_settings(max(2, CLI_EXAMPLES // 3))
@given(
    name=st.sampled_from(SEED_NAMES),
    shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3, unique=True),
    seed=st.integers(0, 2**32 - 1),
)
def test_writers_on_unusual_shapes(name: str, shapes: list[str], seed: int, scratch: Path) -> None:
    rng = random.Random(seed)
    check_writers(shaped(rng, dict(SEEDS)[name], shapes), scratch, rng)


def test_writers_on_each_shape_of_issue_40(scratch: Path) -> None:
    """The three shapes together on a session with a conversation, deterministically."""
    lines = dict(SEEDS)["gen-s0005_v3"]
    for shapes in (["garbage-first", "second-header", "unterminated"], ["crlf", "unterminated"], ["torn-last"]):
        check_writers(_plain_shape(b"".join(lines), shapes), scratch, random.Random(len(shapes)))


def _plain_shape(data: bytes, shapes: list[str]) -> bytes:
    """:func:`shaped` without the random mutation."""
    rng = random.Random(0)
    rng.random = lambda: 1.0  # type: ignore[method-assign]  # never mutate
    return shaped(rng, data.splitlines(keepends=True), shapes)
