"""piconfig's agent dir and path rules give Pi's own answers (recorded from node, and live when possible)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pitools import piconfig
from pitools.errors import ConfigError
from tests.support import node, pi_ref_dir
from tests.unit.piconfig.cases import cases
from tests.unit.piconfig.record import FIXTURE, ask_node


def _env(case: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in case["env"].items() if v is not None}


def pitools_answer(case: dict[str, Any]) -> dict[str, Any]:
    env = _env(case)
    try:
        if case["kind"] == "agentDir":
            answer: Any = {
                "agentDir": piconfig.agent_dir(env),
                "modelsPath": piconfig.models_path(env),
                "authPath": piconfig.auth_path(env),
                "settingsPath": piconfig.settings_path(env),
                "sessionsDir": piconfig.sessions_dir(env),
            }
        elif case["kind"] == "normalizePath":
            answer = piconfig.normalize_path(case["input"], env)
        else:
            answer = piconfig.resolve_path(case["input"], case["base"], env)
    except ConfigError:
        return {"error": True}
    return {"answer": answer}


def _expected(recorded: dict[str, Any]) -> dict[str, Any]:
    return {"error": True} if "error" in recorded else {"answer": recorded["answer"]}


RECORDED = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]


def test_fixture_covers_every_case() -> None:
    assert [{k: c[k] for k in c if k not in ("answer", "error")} for c in RECORDED] == cases()


@pytest.mark.parametrize("recorded", RECORDED, ids=lambda c: f"{c['kind']}-{json.dumps(c.get('input', c['env']))}")
def test_matches_recorded_pi(recorded: dict[str, Any]) -> None:
    assert pitools_answer(recorded) == _expected(recorded)


def test_matches_pi_live_and_fixture_is_fresh() -> None:
    ref = pi_ref_dir()
    if ref is None or node() is None:
        pytest.skip("node or the Pi reference is not available; the recorded answers are used")
    live = ask_node(ref)
    assert live == RECORDED, "tests/unit/piconfig/pi_config_answers.json is stale: python -m tests.unit.piconfig.record"
    for case in live:
        assert pitools_answer(case) == _expected(case), case


def test_file_url_without_a_host_is_a_path_and_with_one_an_error() -> None:
    assert piconfig.agent_dir({"PI_CODING_AGENT_DIR": "file:///x/y", "HOME": "/h"}) == "/x/y"
    with pytest.raises(ConfigError):
        piconfig.agent_dir({"PI_CODING_AGENT_DIR": "file://server/x", "HOME": "/h"})
