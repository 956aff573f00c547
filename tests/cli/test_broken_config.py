"""One broken configuration file at a time: every command that reads Pi's configuration reacts as Pi does.

Pi's reactions come from Pi's own loaders run under node (``tests/unit/piconfig/
pi_broken_files.mjs``, recorded in ``pi_broken_files_answers.json`` by
``python -m tests.unit.piconfig.record``): a broken settings.json, project settings file,
models.json or auth.json never stops Pi; it skips the file (reporting settings and models.json
problems) and carries on. So each command here must end exactly as it does with no configuration
at all, and the commands that print warnings must name the file Pi complained about.

Before the one resolver (pitools/piconfig/resolver.py), a broken models.json made ``request`` exit
1 while ``compact --dry-run`` warned and exited 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pitools.piconfig.resolver import load_pi_config
from tests.support import ROOT
from tests.unit.piconfig.broken_cases import BROKEN_CASES

ANSWERS: list[dict[str, Any]] = json.loads(
    (ROOT / "tests" / "unit" / "piconfig" / "pi_broken_files_answers.json").read_text(encoding="utf-8")
)["cases"]
SAMPLE = ROOT / "examples" / "sample-session.jsonl"
NAMES = {"settings": "settings.json", "models": "models.json", "auth": "auth.json", "project": "settings.json"}
#: Every command that reads Pi's configuration, with arguments that succeed on the sample session.
COMMANDS: dict[str, list[str]] = {
    "request": ["request", "{session}", "--format", "json"],
    "compact": ["compact", "{session}", "--dry-run"],
    "navigate": ["navigate", "{session}", "--to", "3a7f1c02", "--dry-run"],
    "heal": ["heal", "{session}", "--for-model", "anthropic/claude-sonnet-4-5", "--dry-run"],
    "validate": ["validate", "{session}", "--for-model", "anthropic/claude-sonnet-4-5", "--format", "json"],
    "ls": ["ls", "--cwd", "{project}", "--no-cache", "--format", "json"],
}
#: Commands that report configuration warnings on stderr.
WARNS = ("request", "compact", "navigate", "heal")
#: Commands whose output does not show the configuration: a skipped file leaves it as it was.
SAME_OUTPUT = ("request", "heal", "validate", "ls")


def _case_id(case: dict[str, Any]) -> str:
    trusted = {True: "-trusted", False: "-untrusted"}.get(case.get("trusted"), "")
    return f"{case['file']}{trusted}-{case['text'][:24]!r}"


def test_the_recorded_answers_cover_every_case() -> None:
    assert [{k: v for k, v in a.items() if k != "answer"} for a in ANSWERS] == BROKEN_CASES
    assert all(a["answer"]["carriesOn"] for a in ANSWERS), "Pi stops on one of them: the tests below assume not"


def _layout(tmp: Path, case: dict[str, Any] | None) -> dict[str, str]:
    """A session whose cwd is a project folder, an agent folder, and the case's one broken file."""
    agent, project = tmp / "agent", tmp / "project"
    agent.mkdir(parents=True)
    project.mkdir()
    session = tmp / "s.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    session.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    where = {"session": str(session), "project": str(project), "agent": str(agent)}
    if case is not None:
        _break(where, case)
    return where


def _break(where: dict[str, str], case: dict[str, Any]) -> None:
    agent, project = Path(where["agent"]), Path(where["project"])
    if case["file"] == "project":
        (project / ".pi").mkdir()
        (project / ".pi" / "settings.json").write_text(case["text"], encoding="utf-8")
        (agent / "trust.json").write_text(json.dumps({str(project): case["trusted"]}), encoding="utf-8")
    else:
        (agent / NAMES[case["file"]]).write_text(case["text"], encoding="utf-8")


@pytest.mark.parametrize("answer", ANSWERS, ids=_case_id)
def test_the_resolver_skips_what_pi_skips(answer: dict[str, Any], tmp_path: Path) -> None:
    where = _layout(tmp_path, answer)
    env = {"PI_CODING_AGENT_DIR": where["agent"], "HOME": str(tmp_path)}
    config = load_pi_config(env)
    pi = answer["answer"]
    if answer["file"] in ("settings", "project"):
        project = config.project_settings(where["project"], env)
        problems = list(config.settings.problems) + (list(project.file.problems) if project else [])
        merged = dict(config.settings.data) | (dict(project.file.data) if project and project.applied else {})
        assert bool(problems) == bool(pi["reported"]), problems
        assert merged.get("defaultModel") == pi["defaultModel"]
    elif answer["file"] == "models":
        assert bool(config.models.problems) == bool(pi["reported"]), config.models.problems
        assert sorted(config.models.data) == pi["providers"]
    else:
        # Pi keeps entries that hold no usable credential; pitools drops the ones that are not objects.
        assert set(config.auth.data) <= set(pi["providers"])


@pytest.mark.parametrize("name", list(COMMANDS))
@pytest.mark.parametrize("answer", ANSWERS, ids=_case_id)
def test_every_command_carries_on_as_pi_does(run: Any, answer: dict[str, Any], name: str, tmp_path: Path) -> None:
    where = _layout(tmp_path, None)
    args = [a.format(**where) for a in COMMANDS[name]]
    env = {"PI_CODING_AGENT_DIR": where["agent"]}
    clean = run(*args, exit_code=None, env=env)
    _break(where, answer)
    result = run(*args, exit_code=clean.exit_code, env=env)
    assert "Traceback" not in result.stderr
    if name in SAME_OUTPUT:
        assert result.stdout == clean.stdout
    if name in WARNS and answer["answer"]["reported"]:
        # Pi reports the problem; so does pitools, naming the file.
        assert NAMES[answer["file"]] in result.stderr and "warning" in result.stderr, result.stderr


def test_a_run_reads_each_file_once(run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # request reads models.json for the model and for its settings; compact for the context window.
    from pitools.piconfig import resolver

    where = _layout(tmp_path, {"file": "models", "text": '{"providers": {}}'})
    reads: list[Path] = []
    real = resolver.read_models_file

    def counting(path: Path) -> Any:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(resolver, "read_models_file", counting)
    for name in ("request", "compact"):
        reads.clear()
        run(*[a.format(**where) for a in COMMANDS[name]], env={"PI_CODING_AGENT_DIR": where["agent"]})
        assert reads == [Path(where["agent"]) / "models.json"], name
    # Outside a run nothing is reused: an edit between two calls is seen.
    env = {"PI_CODING_AGENT_DIR": where["agent"]}
    assert dict(resolver.load_pi_config(env).models.data) == {}
    (Path(where["agent"]) / "models.json").write_text('{"providers": {"p": {"baseUrl": "http://h"}}}')
    assert list(resolver.load_pi_config(env).models.data) == ["p"]
