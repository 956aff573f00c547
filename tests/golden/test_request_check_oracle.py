"""The request check's lean walks against the ones they replaced (``tests/oracles/request_check.py``).

``request --check`` (and the session page of ``export --format html`` and ``serve``) finds the
body's images in one walk that builds a field path only for an image, measures the body's size
member by member instead of on its whole text, and reuses the input estimate the build clamped
``max_tokens`` with. Each must give what the old code gave: the same images with the same paths,
the same byte count, the same findings. Checked on every golden session at its default leaf for
every model pi-ai's recordings name, on the bodies pi-ai itself recorded (images of every API's
shape among them), and on mutated copies of the golden sessions.
"""

from __future__ import annotations

import math
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.encode import js_stringify_size
from pitools.core.js.json.parse import parse_json_line
from pitools.core.request.build import RequestBuild, build_request
from pitools.core.request.check import (
    _check_anthropic,
    _images,
    _lone_surrogate_at,
    _surrogate_free,
    _tool_calls,
    check_request,
)
from pitools.core.request.estimate import estimate_input_tokens
from pitools.core.request.models import resolve_request_model
from pitools.errors import PitoolsError
from pitools.piconfig.catalog import chat_models
from tests import support
from tests.oracles import request_check as oracle

pytestmark = pytest.mark.usefixtures("cli_recursion_limit")

CASES = support.golden_request_cases()


@cache
def _models() -> list[dict[str, Any]]:
    refs = sorted({r["model"] for case in CASES for r in support.golden_requests(case)["records"]})
    return [resolve_request_model(ref, chat_models()) for ref in refs]


def _same_body_walks(api: Any, payload: dict[str, Any], where: str) -> None:
    assert _images(api, payload) == oracle.images(api, payload), where
    template, calls = _tool_calls(api, payload)
    for i, j, value in calls:
        path = template.format(i, j)
        expected = oracle.lone_surrogate_at(value, path)
        assert _lone_surrogate_at(value, path) == expected, where
        # the orjson pre-check that skips the walk must never skip a finding
        assert not (_surrogate_free(value) and expected is not None), where
    assert js_stringify_size(payload) == oracle.body_size(payload), where


def _same_check(build: RequestBuild, where: str) -> None:
    _same_body_walks(build.model.get("api"), build.payload, where)
    if build.model.get("api") == "anthropic-messages":  # the Anthropic rules list the calls on the way
        assert _check_anthropic(build.model, build.payload, []) == _tool_calls("anthropic-messages", build.payload)[1]
    window = build.model.get("contextWindow", 0)
    if window > 0:
        fresh = estimate_input_tokens(build.llm_messages)
        assert build.input_tokens is not None, where
        assert build.input_tokens == fresh or (math.isnan(fresh) and math.isnan(build.input_tokens)), where
    else:
        assert build.input_tokens is None, where
    reused = check_request(build.model, build.payload, build.llm_messages, build.input_tokens)
    assert reused == check_request(build.model, build.payload, build.llm_messages), where


@cache
def _one_model_per_api() -> list[dict[str, Any]]:
    return list({m["api"]: m for m in reversed(_models())}.values())


def _check_session(path: Path, where: str, models: list[dict[str, Any]] | None = None) -> int:
    from pitools.core.session.load import load

    try:
        loaded = load(str(path))
    except PitoolsError:
        return 0
    built = 0
    leaf = loaded.leaf(None)
    for model in _models() if models is None else models:
        try:
            build = build_request(loaded.index, leaf, (loaded.session.header or {}).get("id"), model, None)
        except PitoolsError:
            continue
        _same_check(build, f"{where} {model['provider']}/{model['id']}")
        built += 1
    return built


@pytest.mark.parametrize("case", CASES)
def test_golden_sessions(case: str) -> None:
    _check_session(support.GOLDEN / case / "session.jsonl", case)


def test_pi_ais_recorded_bodies() -> None:
    seen_images = 0
    for folder, name in [*((c, "requests") for c in CASES), ("request-wedges", "check-requests")]:
        for record in support.golden_requests(folder, name)["records"]:
            if "payload" not in record:
                continue
            api = resolve_request_model(record["model"], chat_models())["api"]
            text = record["payload"].encode("utf-8", "surrogatepass")
            payload = parse_json_line(text)[0]
            where = f"{folder} {record['model']}"
            _same_body_walks(api, payload, where)
            assert js_stringify_size(payload) == len(text), where  # the size of pi-ai's own bytes
            seen_images += len(_images(api, payload))
    assert seen_images  # the recordings hold images, so the walk is compared on finds too


def test_mutated_sessions(tmp_path: Path) -> None:
    from tests.fuzz.support import mutate_lines, seed_sessions

    rng = random.Random(12)
    built = 0
    for name, lines in seed_sessions():
        for n in range(3):
            path = tmp_path / f"{name}-{n}.jsonl"
            path.write_bytes(mutate_lines(rng, lines))
            built += _check_session(path, f"{name} mutation {n}", _one_model_per_api())
    assert built > 100
