"""The summarizer's last choice is Pi's ``defaultProvider``/``defaultModel`` for the session.

Pi 1.6.0 starts a session whose own model it cannot use with ``findInitialModel`` over
``settingsManager.getDefaultProvider()``/``getDefaultModel()`` (``core/sdk.js``), which read the
merged settings: the agent folder's ``settings.json`` deep-merged with the session project's
``.pi/settings.json``, the latter loaded only when the project is trusted
(``SettingsManager.loadFromStorage(storage, "project", projectTrusted)`` in
``core/settings-manager.js``; the trust rule is :mod:`pitools.piconfig.trust`'s). ``compact
--apply`` and ``navigate --summarize`` must choose that model, not the agent folder's alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pitools.ops.compaction import plan_compact
from pitools.ops.navigate import setup_navigation
from pitools.ops.summarizing import SummarizeRequest, choose


def _session(path: Path, cwd: Path) -> Path:
    """A v3 session in project ``cwd`` whose messages name no model."""
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(cwd)},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "u2",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "user", "content": "again", "timestamp": 2},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    agent, proj = tmp_path / "agent", tmp_path / "proj"
    (proj / ".pi").mkdir(parents=True)
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "openai", "defaultModel": "gpt-global"}))
    (proj / ".pi" / "settings.json").write_text(
        json.dumps({"defaultProvider": "anthropic", "defaultModel": "claude-project"})
    )
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-TESTKEY-abcdefghijklmnop")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-abcdefghijk")
    return agent, proj, _session(tmp_path / "s.jsonl", proj)


def _chosen(session: Path) -> tuple[str, str]:
    """The model compact --apply and navigate --summarize would call, without --model."""
    from pitools.core.session.load import load

    planning = plan_compact(str(session), for_apply=True)
    compact = choose(SummarizeRequest(), session_model=planning.session_model, default_model=planning.default_model)
    setup = setup_navigation(load(str(session)), "u1")
    navigate = choose(SummarizeRequest(), session_model=setup.session_model, default_model=setup.default_model)
    return compact.label, navigate.label


def test_a_trusted_projects_default_model_wins(project: tuple[Path, Path, Path]) -> None:
    agent, proj, session = project
    (agent / "trust.json").write_text(json.dumps({str(proj): True}))
    assert _chosen(session) == ("anthropic/claude-project", "anthropic/claude-project")


def test_an_untrusted_project_is_not_read(project: tuple[Path, Path, Path]) -> None:
    agent, proj, session = project
    (agent / "trust.json").write_text(json.dumps({str(proj): False}))
    assert _chosen(session) == ("openai/gpt-global", "openai/gpt-global")
    (agent / "trust.json").unlink()  # no decision: Pi asks in the terminal, every other mode ignores it
    assert _chosen(session) == ("openai/gpt-global", "openai/gpt-global")


def test_the_project_merges_key_by_key(project: tuple[Path, Path, Path]) -> None:
    """Only defaultModel in the project: the agent folder's defaultProvider stays."""
    agent, proj, session = project
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "anthropic", "defaultProjectTrust": "always"}))
    (proj / ".pi" / "settings.json").write_text(json.dumps({"defaultModel": "claude-project"}))
    assert _chosen(session) == ("anthropic/claude-project", "anthropic/claude-project")


def test_no_config_reads_neither(project: tuple[Path, Path, Path]) -> None:
    agent, proj, session = project
    (agent / "trust.json").write_text(json.dumps({str(proj): True}))
    planning = plan_compact(str(session), for_apply=True, use_config=False)
    request = SummarizeRequest(use_config=False)
    assert choose(request, session_model=None, default_model=planning.default_model).label.startswith("builtin")
