"""Parity with pi-ai 1.6.0 under Pi's settings that change a request body.

``scripts/record_requests.mjs --settings`` records, for a few golden sessions at the default leaf,
every model's body under each of ``SETTINGS_VARIANTS`` (``defaultThinkingLevel``,
``thinkingBudgets``) at the session's level and at explicit ones, into
``golden/<case>/requests-settings.jsonl``: the options Pi's agent hands pi-ai's ``streamSimple``.
pitools must build the same bytes from the same settings, and read them from the settings files
the way Pi does (``pitools request`` through ``main()``).
"""

from __future__ import annotations

import io
import json
from functools import cache, partial
from pathlib import Path
from typing import Any

import pytest

from pitools.cli import Environment, main
from pitools.core.request.build import build_request
from pitools.core.request.models import resolve_request_model
from pitools.piconfig.catalog import chat_models
from tests import support

CASES = support.golden_request_cases("requests-settings")


@cache
def _recording(case: str) -> dict[str, Any]:
    return support.golden_requests(case, "requests-settings")


@cache
def _loaded(case: str) -> Any:
    from pitools.core.session.load import load

    return load(str(support.golden_session(case)))


@pytest.mark.parametrize("case", CASES)
def test_bodies_under_settings_match_pi_ai(case: str) -> None:
    loaded = _loaded(case)
    leaf = loaded.leaf(None)
    mismatches: list[str] = []
    compared = 0
    for record in _recording(case)["records"]:
        settings = record["settings"]
        model = resolve_request_model(record["model"], chat_models())
        where = f"{case} model={record['model']} thinking={record['thinking']} settings={settings}"
        seen, problem = support.request_mismatch(
            record,
            partial(
                build_request,
                loaded.index,
                leaf,
                (loaded.session.header or {}).get("id"),
                model,
                record["thinking"],
                default_level=settings.get("defaultThinkingLevel"),
                budgets=settings.get("thinkingBudgets"),
            ),
            where,
        )
        compared += seen
        if problem is not None:
            mismatches.append(problem)
    assert not mismatches, "\n".join(mismatches[:20])
    assert compared > 100


def test_the_settings_change_the_bodies() -> None:
    """Each variant changes some body against Pi's defaults, so the comparison above means something."""
    variants: set[str] = set()
    changed: set[str] = set()
    for case in CASES:
        defaults = support.golden_requests(case)
        plain = {
            r["model"]: r.get("payload") for r in defaults["records"] if r["leafArg"] is None and r["thinking"] is None
        }
        for record in _recording(case)["records"]:
            key = json.dumps(record["settings"], sort_keys=True)
            variants.add(key)
            if record["thinking"] is None and record.get("payload") not in (None, plain.get(record["model"])):
                changed.add(key)
    assert changed == variants and len(variants) >= 5


def _pitools_request(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    env = Environment(
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        stdin=io.StringIO(),
        environ={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "TZ": "UTC"},
    )
    status = main(["request", *args], env)
    return status, env.stdout.getvalue(), env.stderr.getvalue()


def _with_settings(tmp_path: Path, settings: dict[str, Any]) -> None:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


@pytest.mark.parametrize("index", range(3))
def test_pitools_request_reads_the_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int) -> None:
    """The agent folder's settings.json reaches the body exactly as pi-ai built it; --no-config ignores it."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    records = [r for r in _recording("sample-session")["records"] if r["thinking"] is None and "payload" in r]
    record = records[index * 17 % len(records)]
    _with_settings(tmp_path, record["settings"])
    session = str(support.golden_session("sample-session"))
    status, out, _err = _pitools_request(tmp_path, session, "--model", record["model"], "--format", "json")
    assert status == 0 and out.rstrip("\n") == record["payload"]
    status, plain, _err = _pitools_request(
        tmp_path, session, "--model", record["model"], "--format", "json", "--no-config"
    )
    defaults = support.golden_requests("sample-session")
    expected = next(
        r["payload"]
        for r in defaults["records"]
        if r["leafArg"] is None and r["thinking"] is None and r["model"] == record["model"]
    )
    assert status == 0 and plain.rstrip("\n") == expected


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"defaultThinkingLevel": "banana"}, "defaultThinkingLevel is 'banana'"),
        ({"thinkingBudgets": {"high": "lots"}}, "thinkingBudgets.high is lots"),
        ({"thinkingBudgets": {"low": -5}}, "thinkingBudgets.low is -5"),
    ],
)
def test_a_setting_pi_ai_would_break_on_is_one_line_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any], message: str
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    _with_settings(tmp_path, settings)
    session = str(support.golden_session("sample-session"))
    status, out, err = _pitools_request(tmp_path, session, "--model", "anthropic/claude-sonnet-4-5")
    assert status == 1 and out == "" and err.count("\n") == 1 and message in err and "settings.json" in err


@pytest.mark.parametrize("trusted", [None, False, True])
def test_a_project_settings_file_applies_only_where_pi_trusts_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool | None
) -> None:
    """A repository can ship .pi/settings.json: like Pi, only a trusted project's file changes the body."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    record = next(
        r
        for r in _recording("seed-running-example")["records"]
        if r["settings"] == {"defaultThinkingLevel": "high"} and r["thinking"] is None and "payload" in r
    )
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(json.dumps(record["settings"]), encoding="utf-8")
    (tmp_path / "agent").mkdir()
    if trusted is not None:
        (tmp_path / "agent" / "trust.json").write_text(json.dumps({str(project): trusted}), encoding="utf-8")
    lines = support.golden_session("seed-running-example").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    session = tmp_path / "s.jsonl"
    session.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    status, out, err = _pitools_request(tmp_path, str(session), "--model", record["model"], "--format", "json")
    assert status == 0
    if trusted:
        assert out.rstrip("\n") == record["payload"] and err == ""
    else:
        plain = support.golden_requests("seed-running-example")
        expected = next(
            r["payload"]
            for r in plain["records"]
            if r["leafArg"] is None and r["thinking"] is None and r["model"] == record["model"]
        )
        assert out.rstrip("\n") == expected != record["payload"] and "not applied" in err
