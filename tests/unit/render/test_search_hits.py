"""``pitools search``'s plain human output (pitools.render.search_hits.plain) is the very text rich
prints without colour, over hostile hits: the warm search prints it without importing rich."""

from __future__ import annotations

import datetime as dt
import io
import itertools
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pitools.cli.environment import Environment
from pitools.cli.fast_search import plain_stdout
from pitools.cli.output import Output, wants_color
from pitools.render.archive import render_search, safe_text
from pitools.render.search_hits import plain, safe_line, segments

NOW = dt.datetime(2026, 7, 29, 12, 0, tzinfo=dt.UTC)

#: Text a session may hold that a terminal or rich would act on, or that is hard to measure.
HOSTILE = [
    "",
    " ",
    "plain words",
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;http://x\x07link\x1b]8;;\x07",
    "\x1b]52;c;aGk=\x07",
    "tab\there",
    "cr\rline",
    "crlf\r\nnext",
    "lf\nnext\n",
    "\x00\x07\x08\x0b\x0c\x7f\x85\x9b",
    "lone \ud800 and \udfff surrogates",
    "rtl \u202e gnp.exe \u202c \u2066iso\u2069 \u061c \u200e\u200f \u2028\u2029",
    "宽字符 ＣＪＫ 漢字",
    "e\u0301 combining a\u0308\u0308",
    "[bold]markup[/bold] [red]x[/] :smile: :thumbs_up:",
    "trailing spaces   ",
    "   leading",
    "emoji 👍🏽 zwj 👨‍👩‍👧",
    "\u00a0nbsp\u3000ideographic space",
    "x" * 5000,
]

hostile_text = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40))


def _hit(rng: Any, i: int, path: str) -> dict[str, Any]:
    snippet = rng([*HOSTILE, f"before match{i} after"])
    n = len(snippet)
    edges = [[0, min(3, n)], [max(0, n - 3), n], [0, n], [2, 1 + n // 2], [1, 2]]
    highlights = [] if not n else [e for e in edges[: (i % 4) + 1] if e[0] <= e[1] <= n]
    return {
        "session": {"path": path, "name": rng(HOSTILE) or None, "id": rng(HOSTILE), "cwd": rng(HOSTILE)},
        "inContext": i % 5 == 0,
        "summarizedAway": i % 5 == 1,
        "onCurrentBranch": i % 5 != 2,
        "copied": i % 3 == 0,
        "inThinking": i % 4 == 0,
        "timestamp": [
            "2026-07-29T11:59:30.000Z",
            "2026-07-29T11:00:00.000Z",
            "2026-07-29T01:00:00.000Z",
            "2026-07-20T12:00:00.000Z",
            "2025-01-01T00:00:00.000Z",
            "2027-01-01T00:00:00.000Z",  # the future: a local date with its zone
            "not a time\x1b[2J",
            None,
            "",
        ][i % 9],
        "entryId": [rng(HOSTILE), None, "a1b2c3d4"][i % 3],
        "role": [rng(HOSTILE), None, "toolResult", "assistant"][i % 4],
        "tools": [[], ["bash"], [rng(HOSTILE), "read"]][i % 3],
        "snippet": snippet,
        "highlights": highlights,
        "leaves": [rng(HOSTILE) for _ in range(i % 7)],
        "commands": [f"pitools show {rng(HOSTILE)}"],
    }


def _result(hits: list[dict[str, Any]], truncated: bool = False) -> dict[str, Any]:
    return {"query": "q", "mode": "fts", "count": len(hits), "truncated": truncated, "hits": hits}


def _rich(result: dict[str, Any], **kw: Any) -> str:
    """What the output layer's rich console prints without colour (a pipe: no width limit)."""
    stream = io.StringIO()
    out = Output.from_environment("never", stdout=stream, stderr=io.StringIO(), stdin=io.StringIO(), env={}, **kw)
    render_search(out.console(), result, NOW)
    return stream.getvalue()


def _plain(result: dict[str, Any]) -> str | None:
    return plain(segments(result, NOW))


def _picker(seed: int) -> Any:
    cycle = itertools.count(seed)

    def rng(options: list[str]) -> str:
        return options[(next(cycle) * 7919) % len(options)]

    return rng


@pytest.mark.parametrize("count", [0, 1, 2, 40])
@pytest.mark.parametrize("truncated", [False, True])
def test_plain_equals_rich_over_hostile_hits(count: int, truncated: bool) -> None:
    rng = _picker(count)
    paths = ["/s/a.jsonl", "/s/\x1b[31mb\tc.jsonl", "/s/宽.jsonl"]
    hits = [_hit(rng, i, paths[(i // 3) % 3]) for i in range(count)]
    result = _result(hits, truncated)
    expected = _rich(result)
    assert _plain(result) == expected
    assert "\x1b" not in expected and "\t" not in expected and "\r" not in expected
    if count == 0:
        assert expected == ("0 hits (more not shown: raise --limit)\n" if truncated else "0 hits\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(hostile_text, min_size=12, max_size=12),
    spans=st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45)), max_size=4),
    truncated=st.booleans(),
)
def test_plain_equals_rich_for_any_text(texts: list[str], spans: list[tuple[int, int]], truncated: bool) -> None:
    snippet = texts[0]
    highlights = sorted([min(a, b), max(a, b)] for a, b in spans if max(a, b) <= len(snippet))
    hit = {
        "session": {"path": texts[1], "name": texts[2], "id": texts[3], "cwd": texts[4]},
        "inContext": False,
        "summarizedAway": False,
        "onCurrentBranch": True,
        "copied": True,
        "inThinking": False,
        "timestamp": texts[5] or "2026-07-29T11:00:00.000Z",
        "entryId": texts[6],
        "role": texts[7],
        "tools": [texts[8]] if texts[8] else [],
        "snippet": snippet,
        "highlights": highlights,
        "leaves": [texts[9], texts[10]],
        "commands": [texts[11]],
    }
    other = dict(hit, session=dict(hit["session"], path=texts[1] + "/other"))
    result = _result([hit, hit, other], truncated)
    assert _plain(result) == _rich(result)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(hostile_text, st.text()))
def test_safe_line_is_the_renderers_safe_text(text: str) -> None:
    assert safe_line(text) == safe_text(text)


def test_a_line_rich_might_wrap_is_left_to_rich() -> None:
    hit = _hit(_picker(1), 1, "/s/" + "w" * 600_000)
    result = _result([hit])
    assert _plain(result) is None
    assert _rich(result).startswith("/s/www")


def test_relative_times_use_now() -> None:
    hit = _hit(_picker(2), 1, "/s/a.jsonl")  # 11:00 on NOW's day
    assert "  1 h ago " in _plain(_result([hit])).splitlines()[1]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"NO_COLOR": "1"},
        {"FORCE_COLOR": "1"},
        {"FORCE_COLOR": "0"},
        {"FORCE_COLOR": ""},
        {"NO_COLOR": "1", "FORCE_COLOR": "1"},
        {"TERM": "dumb"},
        {"TERM": "dumb", "FORCE_COLOR": "3"},
        {"PITOOLS_WIDTH": "80"},
    ],
)
def test_plain_stdout_follows_the_output_layer(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a terminal: plain exactly when the output layer gives stdout no colour and no width."""
    monkeypatch.setattr("sys.stdout", io.StringIO())
    out = Output.from_environment(env=env, stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    run_env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), environ=env)
    assert plain_stdout(run_env) == (not wants_color("auto", False, env) and out.width is None)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_STEPS = [0, 1, -1, 59_999_999, 60_000_000, 3_599_999_999, 3_600_000_000, 86_399_999_999, 86_400_000_000]
_STEPS += [86_400_000_000 * 14 - 1, 86_400_000_000 * 14, 10**15]


@settings(max_examples=500, deadline=None)
@given(
    ms=st.integers(0, 2**45),
    step=st.one_of(st.sampled_from(_STEPS), st.integers(-(10**12), 10**15)),
    tz=st.sampled_from(["UTC", "America/Los_Angeles", "Asia/Kolkata", "Australia/Lord_Howe"]),
)
def test_ago_is_vocab_ago(ms: int, step: int, tz: str) -> None:
    """The index's times without datetime: vocab.ago's words and local dates, to the microsecond."""
    import time

    from pitools.render.search_hits import ago
    from pitools.render.vocab import ago as general

    saved = os.environ.get("TZ")
    os.environ["TZ"] = tz
    time.tzset()
    try:
        when = _EPOCH + dt.timedelta(milliseconds=ms)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
        now = when + dt.timedelta(microseconds=step)
        assert ago(stamp, now) == general(stamp, now)
        for odd in (
            "2026-02-29T00:00:00.000Z",
            "2100-02-29T00:00:00.000Z",
            "2000-02-29T00:00:00.000Z",
            "1969-12-31T23:59:59.999Z",
            "2026-07-29 11:00:00Z",
            "２０２６",
        ):
            assert ago(odd, now) == general(odd, now)
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()
