"""Deep nesting: ``validate`` reports Pi's RangeError exactly where V8's JSON.stringify gives up.

Pi 1.6.0 parses any depth, but V8's JSON.stringify throws once a value nests about 4,114 levels
deep. It does so where Pi stringifies: a tool call's arguments and a system message's
``toolsAdded`` (estimateTokens, prepareCompaction, serializeConversation), and every entry when
Pi migrates a v1/v2 file at open and writes it back (after truncating it: the entries from the
deep one on are lost). Tool-result details, extra fields and custom entries of a v3 file are
never stringified by Pi, so they are no crash.

The sessions have the shape ``scripts/pi_probe_deep.mjs`` writes (a user message, the entry with
the value nested DEPTH deep at a position, a user message). The unit tests check the threshold
on pitools' side; the reference tests (node and Pi 1.6.0 installed, skipped otherwise) run the
probe on the same bytes and require that ``validate`` reports the crash exactly when one of Pi's
own steps throws, one level either side of the threshold.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pitools.core.validate import validate_file
from pitools.core.validate.pi_crashes import PI_STRINGIFY_DEPTH
from tests import support

T = "2026-01-01T00:00:00.000Z"
MARK = '"__DEEP__"'
POSITIONS = ["args", "toolsAdded", "details", "content", "custom", "custom-message"]
#: Levels from the entry object down to the marker (the entry itself counts as one).
ENTRY_LEVELS = {"args": 5, "toolsAdded": 3, "details": 3, "content": 4, "custom": 2, "custom-message": 2}
#: v3: the positions Pi stringifies, and the levels of the stringified value above the marker.
STRINGIFIED = {"args": 1, "toolsAdded": 1}
#: Pi's steps on the probed session that are real (the probe's two plain JSON.stringify steps are
#: an upper bound of the request body, and a rewrite a v3 file does not get at open).
PI_STEPS = (
    "SessionManager.open",
    "buildSessionContext",
    "estimateTokens",
    "prepareCompaction",
    "serializeConversation",
)


def _middle(position: str) -> dict[str, Any]:
    return {
        "args": {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"x": "__DEEP__"}}],
                "stopReason": "toolUse",
                "timestamp": 2,
            },
        },
        "toolsAdded": {
            "type": "message",
            "message": {"role": "system", "content": "", "toolsAdded": ["__DEEP__"], "timestamp": 2},
        },
        "details": {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c0",
                "toolName": "read",
                "content": [{"type": "text", "text": "r"}],
                "details": {"x": "__DEEP__"},
                "isError": False,
                "timestamp": 2,
            },
        },
        "content": {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text", "text": "t", "x": "__DEEP__"}], "timestamp": 2},
        },
        "custom": {"type": "custom", "customType": "probe", "data": {"x": "__DEEP__"}},
        "custom-message": {
            "type": "custom_message",
            "customType": "probe",
            "content": "c",
            "display": True,
            "details": {"x": "__DEEP__"},
        },
    }[position]


def session_bytes(position: str, depth: int, version: int = 3) -> bytes:
    """The probe's session: the value at ``position`` nested ``depth`` arrays deep."""
    entries = [
        {"type": "message", "message": {"role": "user", "content": "go", "timestamp": 1}},
        _middle(position),
        {"type": "message", "message": {"role": "user", "content": "more", "timestamp": 3}},
    ]
    lines = [json.dumps({"type": "session", "version": version, "id": "probe", "timestamp": T, "cwd": "/tmp"})]
    parent = None
    for i, entry in enumerate(entries):
        line = json.dumps({**entry, "id": f"e{i}", "parentId": parent, "timestamp": T}, separators=(",", ":"))
        lines.append(line.replace(MARK, "[" * depth + "]" * depth))
        parent = f"e{i}"
    return ("\n".join(lines) + "\n").encode()


def first_crashing_depth(position: str, version: int) -> int | None:
    """The smallest marker depth at which pitools' rule says Pi throws (None: never, in v3)."""
    if version < 3:
        return PI_STRINGIFY_DEPTH - ENTRY_LEVELS[position]
    levels = STRINGIFIED.get(position)
    return None if levels is None else PI_STRINGIFY_DEPTH - levels


def deep_findings(path: Path) -> list[tuple[int | None, str]]:
    report = validate_file(path)
    return [
        (f.line, f.message) for f in report.findings if f.code == "pi-would-crash" and "JSON.stringify" in f.message
    ]


@pytest.mark.parametrize("version", [3, 2])
@pytest.mark.parametrize("position", POSITIONS)
def test_the_threshold_on_pitools_side(position: str, version: int, tmp_path: Path) -> None:
    first = first_crashing_depth(position, version)
    path = tmp_path / "s.jsonl"
    for depth in (1000, 4000, 4105) if first is None else (first - 1,):
        path.write_bytes(session_bytes(position, depth, version))
        assert deep_findings(path) == [], depth
    if first is None:
        path.write_bytes(session_bytes(position, 6000, version))
        assert deep_findings(path) == []
        return
    for depth in (first, first + 1, 6000, 25000):
        path.write_bytes(session_bytes(position, depth, version))
        found = deep_findings(path)
        assert [line for line, _ in found] == [3], (depth, found)
        assert ("cannot open this session" in found[0][1]) == (version < 3)


def test_only_the_first_deep_entry_of_a_migrated_file_is_reported(tmp_path: Path) -> None:
    """Pi's rewrite stops at the first entry it cannot write; the later ones are lost with it."""
    lines = session_bytes("custom", 5000, version=2).splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join([*lines, lines[2].replace(b'"e1"', b'"e9"', 1)]))
    assert [line for line, _ in deep_findings(path)] == [3]


def test_a_v3_file_is_no_rewrite(tmp_path: Path) -> None:
    """Deep data in a custom entry of a v3 file: Pi reads and uses the session without stringifying it."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes("custom", 25000))
    assert deep_findings(path) == []
    assert [f.code for f in validate_file(path).findings] == []


def test_no_double_report_past_pitools_own_frames(tmp_path: Path) -> None:
    """Past ~20,000 levels pitools' replay of Pi runs out of frames too: one finding, not two."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes("args", 30000))
    messages = [f.message for f in validate_file(path).findings if f.code == "pi-would-crash"]
    assert sum("Maximum call stack" in m for m in messages) == 1, messages


# -- against Pi 1.6.0 ---------------------------------------------------------------------------------


def _probe(position: str, depth: int, version: int, keep: Path) -> dict[str, Any]:
    ref, node = support.pi_ref_dir(), support.node()
    if ref is None or node is None:
        pytest.skip("needs node and Pi 1.6.0 (PI_REF_DIR or a .pi-ref install)")
    argv = [node, str(support.ROOT / "scripts" / "pi_probe_deep.mjs"), str(depth), "--json", "--write", str(keep)]
    argv += ["--position", position, "--version", str(version)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True, env={"PI_REF_DIR": str(ref)})
    return dict(json.loads(proc.stdout)["steps"])


@pytest.mark.parametrize("version", [3, 2])
@pytest.mark.parametrize("position", POSITIONS)
def test_validate_reports_exactly_where_pi_throws(position: str, version: int, tmp_path: Path) -> None:
    first = first_crashing_depth(position, version)
    depths = [4000, 6000] if first is None else [first - 1, first]
    for depth in depths:
        keep = tmp_path / f"d{depth}.jsonl"
        steps = _probe(position, depth, version, keep)
        pi_throws = [name for name in PI_STEPS if steps.get(name) is not None]
        assert all("RangeError" in steps[name] for name in pi_throws), steps
        found = deep_findings(keep)
        assert bool(found) == bool(pi_throws), (position, version, depth, steps, found)
        if found:
            assert [line for line, _ in found] == [3]
