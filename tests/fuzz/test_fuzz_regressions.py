"""Hand-made worst cases from the issue, through the core and the CLI.

The ``xfail(strict=True)`` tests pin bugs that fuzzing found and that are still open: they fail
(XPASS is an error) as soon as the bug is fixed, so the marker goes away with the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fuzz import support

HEADER = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/r"}


def _entry(eid: str, parent: str | None, message: object, etype: str = "message") -> dict[str, object]:
    return {
        "type": etype,
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01Z",
        "message": message,
    }


def _session(*entries: dict[str, object], header: dict[str, object] | None = None) -> bytes:
    return b"".join(support.to_line(e) for e in (header or HEADER, *entries))


def _user(text: object) -> dict[str, object]:
    return {"role": "user", "content": text, "timestamp": 1}


def _assistant(*blocks: dict[str, object]) -> dict[str, object]:
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}
    return {
        "role": "assistant",
        "content": list(blocks),
        "usage": usage,
        "stopReason": "stop",
        "timestamp": 2,
    }


def chain(n: int) -> bytes:
    """A linear chain of ``n`` well-formed user/assistant entries (lines written directly: fast)."""
    out = [json.dumps(HEADER).encode() + b"\n"]
    prev = b"null"
    user = b'{"role":"user","content":"hello","timestamp":1}'
    assistant = (
        b'{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"anthropic-messages",'
        b'"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,'
        b'"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},'
        b'"stopReason":"stop","timestamp":2}'
    )
    for i in range(n):
        eid = b'"e%d"' % i
        out.append(
            b'{"type":"message","id":%s,"parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":%s}\n'
            % (eid, prev, user if i % 2 == 0 else assistant)
        )
        prev = eid
    return b"".join(out)


CASES: dict[str, bytes] = {
    "empty": b"",
    "whitespace-only": b" \n\t\n\r\n",
    "header-only": _session(),
    "bom": b"\xef\xbb\xbf" + _session(_entry("a", None, _user("hi"))),
    "nul-bytes": _session(
        _entry("a", None, _user("a\x00b")), _entry("b", "a", _assistant({"type": "text", "text": "\x00"}))
    )
    + b"\x00\x00\n",
    "non-utf8": _session(_entry("a", None, _user("x"))).replace(b'"x"', b'"\xff\xfe\xc3"'),
    "control-and-markup": _session(_entry("a", None, _user("\x1b[31mred\x1b[0m [bold]not markup[/bold] \u2028 \r"))),
    "self-parent": _session(_entry("a", "a", _user("hi"))),
    "two-cycle": _session(_entry("a", "b", _user("hi")), _entry("b", "a", _user("hi"))),
    "cycle-1000": _session(*[_entry(f"c{i}", f"c{(i + 1) % 1000}", _user("x")) for i in range(1000)]),
    "dup-ids": _session(_entry("a", None, _user("1")), _entry("b", "a", _user("2")), _entry("a", "b", _user("3"))),
    "ids-colliding-after-migration": _session(
        {"type": "message", "id": "00000003", "timestamp": "t", "message": _user("v1 entry with an id")},
        {"type": "label", "targetId": "00000001", "label": "L"},
        {"type": "context_edit", "targetId": "00000002", "replacement": None},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 2, "firstKeptEntryId": "00000009"},
        {"type": "message", "id": "00000001", "parentId": "00000003", "message": _user("again")},
        header={"type": "session", "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/r"},
    ),
    "v2-duplicate-ids": _session(
        _entry("00000001", None, _user("x")),
        _entry("00000001", "00000001", _user("y")),
        header={**HEADER, "version": 2},
    ),
    "huge-string": _session(_entry("a", None, _user("é" * 4_000_000))),
    "wide-tree": _session(
        _entry("root", None, _user("r")), *[_entry(f"k{i}", "root", _user("k")) for i in range(2000)]
    ),
    "nesting-1100": _session(_entry("a", None, _user("hi")))
    + b'{"type":"message","id":"b","parentId":"a","message":'
    + b"[" * 1100
    + b"]" * 1100
    + b"}\n",
    # Found by `make fuzz` (session 4): a leaf whose id is "" (falsy: Pi's getBranch does not walk
    # from it) above a parentId cycle; branches' depth pass gave it no depth and tripped an
    # internal assertion (exit 3) instead of reporting the path getBranch gives.
    "empty-id-leaf-above-cycle": _session(
        _entry("U1", None, _user("q")),
        _entry("A1", "A3", _user("a")),
        _entry("A2", "A1", _user("b")),
        _entry("", "A2", _user("c")),
        _entry("A3", "A1", _user("d")),
    ),
    "object-ids": _session(
        {"type": "message", "id": {"x": 1}, "parentId": None, "message": _user("x")},
        {"type": "message", "id": ["a"], "parentId": {"x": 1}, "message": _user("y")},
        {"type": "message", "id": 5, "parentId": True, "message": _user("z")},
    ),
}


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.parametrize("name", list(CASES))
def test_worst_cases_through_the_core(name: str, scratch: Path) -> None:
    support.run_core(CASES[name], scratch, f"case-{name}")


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.parametrize("name", list(CASES))
def test_worst_cases_through_the_cli(name: str, scratch: Path) -> None:
    support.check_cli(CASES[name], scratch, f"case-{name}")


@pytest.mark.slow
def test_100k_deep_linear_chain(scratch: Path) -> None:
    """A chain of entries, each the parent of the next: no recursion limit, no quadratic walk.

    ``make fuzz`` runs 100,000 entries through the whole core and every JSON command; the default
    run uses 10,000 (ten times Python's recursion limit) and two commands, to stay fast.
    """
    full = support.EXAMPLES >= 1000
    data = chain(100_000 if full else 10_000)
    support.run_core(data, scratch, "chain", timeout=900 if full else 120)
    invocations = [args for args in support.cli_invocations(str(scratch)) if "json" in args]
    if not full:
        invocations = [args for args in invocations if args[0] in ("context", "tree")][:2]
    support.check_cli(data, scratch, "chain", invocations, timeout=900 if full else 120)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    """A missing file is bad input (exit 1); a directory is a usage error (exit 2): for validate and
    scan, which take folders, a folder holding no session file (a mistyped CI path)."""
    missing = tmp_path / "nope.jsonl"
    for args in support.cli_invocations(str(missing)):
        rc, _out, err = support.run_cli_inprocess(args)
        assert support.outcome_problem(rc, err) is None, (args, rc, err)
        assert rc == 1, (args, rc, err)
    folder = tmp_path / "empty-dir"
    folder.mkdir()
    for args in support.cli_invocations(str(folder)):
        rc, _out, err = support.run_cli_inprocess(args)
        if rc == 2:
            if args[0] in ("validate", "scan"):
                assert "no session files" in err, (args, err)
            else:
                assert "is a directory" in err, (args, err)
            continue
        assert support.outcome_problem(rc, err) is None, (args, rc, err)


# -- bugs the fuzzers found (fixed in 79450e7); strict-xfail tests pin the ones still open ----------------


def _strict_cli(data: bytes, scratch: Path, *commands: list[str]) -> None:
    scratch.write_bytes(data)
    for extra in commands:
        args = [extra[0], str(scratch), *extra[1:]]
        rc, _out, err = support.run_cli_inprocess(args)
        problem = support.outcome_problem(rc, err)
        assert problem is None, f"pitools {' '.join(args)}: {problem}: {err[-500:]}"


DEEP = _session(
    _entry("a", None, _user("hi")),
    _entry(
        "b",
        "a",
        _assistant({"type": "toolCall", "id": "c", "name": "read", "arguments": {"d": support.DEEP + "600"}}),
    ),
)
SURROGATE = _session(_entry("a", None, _user("bad " + support.LONE_SURROGATE + " text")))
OBJECT_TYPE = _session(_entry("a", None, _user("hi")), {"type": {"x": 1}, "id": "b", "parentId": "a"})


def test_deep_nesting_context_json(scratch: Path) -> None:
    _strict_cli(DEEP, scratch, ["context", "--format", "json"])


def test_lone_surrogate_human_output(scratch: Path) -> None:
    _strict_cli(SURROGATE, scratch, ["context"], ["context", "--format", "markdown"])


def test_stderr_message_is_one_line(scratch: Path) -> None:
    scratch.write_bytes(_session(_entry("a", None, _user("hi")), _entry("b", "a", _user("again"))))
    rc, _out, err = support.run_cli_inprocess(
        [
            "compact",
            str(scratch),
            "--dry-run",
            "--format",
            "json",
            "--keep-recent-tokens",
            "1",
            "--no-config",
        ],
        columns=80,
    )
    assert rc == 0, err
    assert all(line.startswith("pitools: ") for line in err.splitlines()), err


def test_string_usage_in_inspect(scratch: Path) -> None:
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    usage = {"input": 1, "output": "12", "cacheRead": 0, "cacheWrite": 0, "totalTokens": 13, "cost": cost}
    reply = {**_assistant({"type": "text", "text": "ok"}), "usage": usage}
    _strict_cli(_session(_entry("a", None, _user("hi")), _entry("b", "a", reply)), scratch, ["inspect"])


def test_object_entry_type_in_tree(scratch: Path) -> None:
    _strict_cli(OBJECT_TYPE, scratch, ["tree"])


def test_nesting_15000_context_json(scratch: Path) -> None:
    line = b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","x":'
    _strict_cli(_session() + line + b"[" * 15000 + b"]" * 15000 + b"}}\n", scratch, ["context", "--format", "json"])


def test_object_timestamp_with_tostring_in_tree(scratch: Path) -> None:
    a = _entry("a", None, _user("hi"))
    b = {**_entry("b", "a", _user("x")), "timestamp": {"toString": 1}}
    c = _entry("c", "a", _user("y"))
    _strict_cli(_session(a, b, c), scratch, ["tree"], ["inspect"])


@pytest.mark.parametrize("odd", ["surrogate", "deep"])
def test_compact_plan_json_with_data_orjson_refuses(odd: str, scratch: Path) -> None:
    # The region listing is serialized ahead (Serialized); when the rest of the plan has a lone
    # surrogate or nests past orjson's limit, the slow serializers must still see plain data.
    first = _user("bad " + support.LONE_SURROGATE + " text") if odd == "surrogate" else _user("hi")
    if odd == "deep":
        first = {**first, "x": json.loads("[" * 300 + "]" * 300)}
    data = _session(_entry("a", None, first), _entry("b", "a", _user("again")), _entry("c", "b", _user("more")))
    _strict_cli(data, scratch, ["compact", "--dry-run", "--format", "json", "--keep-recent-tokens", "1", "--no-config"])


def test_a_note_before_the_error_is_not_a_second_error(tmp_path: Path) -> None:
    """Fuzz find (seed 71): on a v1 file `context` prints the stand-in-ids note and then Pi's
    TypeError; the note informs, so the run keeps the one-error promise, and two errors still fail it."""
    v1 = (
        b'{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
        b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}\n'
        b'{"type":"message","timestamp":"2025-01-01T00:00:02.000Z"}\n'
    )
    scratch = tmp_path / "v1.jsonl"
    scratch.write_bytes(v1)
    rc, _out, err = support.run_cli_inprocess(["context", str(scratch)])
    assert rc == 1
    assert err.startswith("pitools: note: this file predates entry ids")
    assert "TypeError: Cannot read properties of undefined (reading 'role')" in err
    assert support.outcome_problem(rc, err) is None
    assert support.outcome_problem(1, "pitools: a\npitools: b\n") == "2 error messages on stderr"


@pytest.mark.parametrize("etype", [[], {"x": 1}])
def test_unhashable_entry_type_in_repair(etype: object, scratch: Path) -> None:
    """Fuzz find (session 5, seed 63): an entry whose `type` is an array or object made repair's
    lean invariant check raise TypeError (unhashable) once there was something to repair."""
    a = _entry("a", None, _user("hi"))
    odd = {"type": etype, "id": "x", "parentId": "a", "timestamp": "2026-01-01T00:00:02Z"}
    dup = _entry("a", None, _user("dup"))  # a duplicate id: repair has work to do
    _strict_cli(_session(a, odd, dup), scratch, ["repair", "--dry-run"], ["repair", "--dry-run", "--format", "json"])
