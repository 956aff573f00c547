"""Settings, session discovery and the summarizer read Pi's configuration from the same folder.

Before piconfig they computed the agent dir three ways: ``PI_CODING_AGENT_DIR=file:///x/y`` gave
/x/y, /x/y and file:/x/y, and ``HOME=""`` gave two different folders.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pitools import piconfig
from pitools.core.compaction import settings
from pitools.core.session import locate
from pitools.summarize import agent_config

ENVS = [
    {"HOME": "/home/u", "PI_CODING_AGENT_DIR": "file:///x/y"},
    {"HOME": "/home/u", "PI_CODING_AGENT_DIR": "~/agent/"},
    {"HOME": "/home/u", "PI_CODING_AGENT_DIR": "rel/agent"},
    {"HOME": ""},
    {"HOME": "/home/u"},
]


def test_one_agent_folder_function() -> None:
    # settings, the summarizer and the resolver used to have an agent_dir each.
    assert settings.agent_dir is agent_config.agent_dir is piconfig.agent_folder


@pytest.mark.parametrize("env", ENVS, ids=lambda e: repr(e))
def test_one_agent_dir_for_everyone(env: dict[str, str]) -> None:
    expected = piconfig.agent_dir_resolved(env)
    assert os.path.isabs(expected)
    assert str(settings.agent_dir(env)) == expected
    assert str(agent_config.agent_dir(env)) == expected
    assert piconfig.resolve_path(locate.agent_dir(env), os.getcwd(), env) == expected
    # The sessions folder hangs off the same dir.
    assert locate.default_session_dir("/proj", env) == os.path.join(expected, "sessions", "--proj--")


def test_file_url_agent_dir_reads_models_json_from_the_path(tmp_path: Path) -> None:
    agent = tmp_path / "agent dir"
    agent.mkdir()
    (agent / "models.json").write_text('{"providers": {"p": {"baseUrl": "http://h", "models": []}}, // c\n}')
    env = {"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": agent.as_uri()}
    assert agent_config.agent_dir(env) == agent
    assert list(agent_config.read_models(agent_config.agent_dir(env))) == ["p"]
    assert settings.agent_dir(env) == agent
