"""The GitHub Action (action.yml) and the pre-commit hooks, run on a throwaway project.

GitHub and pre-commit cannot run here (no network), so each is exercised the way they run it: the
action's shell steps execute in order with the environment GitHub gives them (inputs as env vars,
GITHUB_OUTPUT, GITHUB_ACTION_PATH), skipping only the `uses:` steps (setup-python, the SARIF upload)
and the pip install (pitools is already installed); each hook's `entry` runs on the files its
`files` pattern selects, as pre-commit passes them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import ROOT, golden_session

BIN = Path(sys.executable).parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "sessions" / "nested").mkdir(parents=True)
    shutil.copy(golden_session("sample-session"), root / "sessions" / "good.jsonl")
    shutil.copy(golden_session("sample-session"), root / "sessions" / "nested" / "with space.jsonl")
    return root


def add_broken(root: Path) -> None:
    shutil.copy(golden_session("broken-orphan"), root / "sessions" / "orphan.jsonl")


def add_secret(root: Path) -> None:
    shutil.copy(golden_session("secrets-planted"), root / "sessions" / "leaky.jsonl")


def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
    return data


def run_action(root: Path, inputs: dict[str, str]) -> tuple[int, str, dict[str, dict[str, str]]]:
    """Run the composite action's shell steps: (exit status of the last step run, stdout, step outputs)."""
    spec = action()
    values = {name: str(meta.get("default", "")) for name, meta in spec["inputs"].items()}
    values.update(inputs)
    outputs: dict[str, dict[str, str]] = {}
    log = []
    status = 0
    for step in spec["runs"]["steps"]:
        if "uses" in step or step.get("id") == "install":
            continue
        condition = step.get("if")
        if condition and not evaluate(condition, values):
            continue
        output_file = root.parent / f"out-{step.get('id', 'step')}"
        output_file.write_text("")
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output_file)}
        env["GITHUB_ACTION_PATH"] = str(ROOT)
        for key, expression in (step.get("env") or {}).items():
            env[key] = substitute(str(expression), values, outputs)
        proc = subprocess.run(
            ["bash", "-c", step["run"]], cwd=root, env=env, capture_output=True, text=True, check=False
        )
        log.append(proc.stdout + proc.stderr)
        outputs[step.get("id", "")] = dict(
            line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line
        )
        status = proc.returncode
        if status != 0:
            break
    return status, "\n".join(log), outputs


def substitute(expression: str, values: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    def one(match: re.Match[str]) -> str:
        ref = match.group(1).strip()
        if ref.startswith("inputs."):
            return values[ref.removeprefix("inputs.")]
        step, _, name = ref.removeprefix("steps.").partition(".outputs.")
        return outputs.get(step, {}).get(name, "")

    return re.sub(r"\$\{\{(.*?)\}\}", one, expression)


def evaluate(condition: str, values: dict[str, str]) -> bool:
    # The action's conditions are conjunctions of `inputs.X == 'v'`.
    body = condition.strip().removeprefix("${{").removesuffix("}}")
    return all(values[m.group(1)] == m.group(2) for m in re.finditer(r"inputs\.([\w-]+) == '([^']*)'", body))


def test_action_inputs_reach_the_shell_only_through_the_environment() -> None:
    for step in action()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), f"step {step.get('id')} splices an expression into its script"


def test_action_passes_clean_sessions(project: Path) -> None:
    status, log, outputs = run_action(project, {"paths": "sessions"})
    assert status == 0, log
    assert outputs["validate"]["exit-code"] == "0"


def test_action_annotates_and_fails_on_a_broken_session(project: Path) -> None:
    add_broken(project)
    status, log, outputs = run_action(project, {"paths": "sessions"})
    assert status == 1
    assert outputs["validate"]["exit-code"] == "1"
    assert re.search(r"::error file=sessions/orphan\.jsonl,line=7[^:]*::", log), log
    assert "pitools validate failed (exit 1)" in log


def test_action_severity_warning_is_strict(project: Path) -> None:
    lines = golden_session("sample-session").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["version"] = 4
    lines[0] = json.dumps(header, separators=(",", ":"))
    (project / "sessions" / "future.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert run_action(project, {"paths": "sessions"})[0] == 0
    status, log, _ = run_action(project, {"paths": "sessions", "severity": "warning"})
    assert status == 1
    assert "::warning file=sessions/future.jsonl,line=1" in log
    status, log, _ = run_action(project, {"paths": "sessions", "severity": "bogus"})
    assert status == 2 and "severity must be error or warning" in log


def test_action_paths_with_spaces_and_shell_text_are_data(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = f"sessions/nested/with\\ space.jsonl $(touch {marker}) `touch {marker}`; touch {marker}"
    status, _, outputs = run_action(project, {"paths": hostile})
    assert not marker.exists()
    assert status == 1  # the odd words are files that do not exist: reported, never run
    assert outputs["validate"]["exit-code"] == "1"


def test_action_takes_one_path_a_line_with_spaces(project: Path) -> None:
    status, log, outputs = run_action(project, {"paths": "sessions/nested/with space.jsonl\n\nsessions/good.jsonl\n"})
    assert status == 0, log
    assert outputs["validate"]["exit-code"] == "0"
    add_broken(project)
    status, log, _ = run_action(project, {"paths": "sessions/orphan.jsonl\nsessions/nested/with space.jsonl"})
    assert status == 1 and "orphan.jsonl,line=7" in log


def test_action_scan_writes_sarif_and_fails_on_a_secret(project: Path) -> None:
    add_secret(project)
    status, log, outputs = run_action(project, {"paths": "sessions", "scan": "true"})
    assert status == 1
    assert outputs["scan"]["exit-code"] == "1"
    assert "pitools scan found secrets" in log
    sarif = json.loads((project / "pitools-scan.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert results and all(
        "leaky.jsonl" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results
    )
    planted = (project / "sessions" / "leaky.jsonl").read_text()
    secrets = re.findall(r"sk-ant-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{30,}", planted)
    assert secrets, "the planted corpus should hold recognisable keys"
    assert not any(s in log or s in json.dumps(sarif) for s in secrets)  # never the secret itself


def test_action_scan_is_off_by_default(project: Path) -> None:
    add_secret(project)
    status, _, outputs = run_action(project, {"paths": "sessions/good.jsonl"})
    assert status == 0 and "scan" not in outputs


def hooks() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return data


def run_hook(hook_id: str, root: Path) -> subprocess.CompletedProcess[str]:
    (hook,) = [h for h in hooks() if h["id"] == hook_id]
    pattern = re.compile(hook["files"])
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and pattern.search(str(p)))
    argv = shlex.split(hook["entry"]) + list(hook.get("args", [])) + files
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)


def test_hooks_are_the_two_documented() -> None:
    assert {h["id"] for h in hooks()} == {"pitools-validate", "pitools-scan"}
    for hook in hooks():
        assert hook["language"] == "python" and hook["files"] == r"\.jsonl$"


def test_validate_hook(project: Path) -> None:
    assert run_hook("pitools-validate", project).returncode == 0
    add_broken(project)
    proc = run_hook("pitools-validate", project)
    assert proc.returncode == 1
    assert "orphan.jsonl:7" in proc.stdout


def test_scan_hook(project: Path) -> None:
    assert run_hook("pitools-scan", project).returncode == 0
    add_secret(project)
    proc = run_hook("pitools-scan", project)
    assert proc.returncode == 1
    assert "leaky.jsonl" in proc.stdout


def test_every_hook_entry_ends_options_before_the_file_names() -> None:
    # pre-commit appends the staged names after entry + args: without `--` a file named
    # `--session-dir=x.jsonl` would be read as an option and never checked.
    for hook in hooks():
        assert shlex.split(hook["entry"])[-1] == "--", hook["id"]
        assert "args" not in hook, hook["id"]


OPTION_LIKE = "--session-dir=broken.jsonl"


def git_project(tmp_path: Path, hook_id: str, entry: str | None = None) -> tuple[Path, dict[str, str]]:
    """A git repository whose pre-commit config runs ``hook_id`` as the manifest defines it, installed
    as its git hook. ``repo: local`` with ``language: unsupported`` (pitools is installed already,
    so pre-commit needs no network), every other field copied from .pre-commit-hooks.yaml."""
    (hook,) = [h for h in hooks() if h["id"] == hook_id]
    root = tmp_path / "repo"
    root.mkdir()
    local = {key: hook[key] for key in ("id", "name", "entry", "files", "types")}
    local["language"] = "unsupported"
    if entry is not None:
        local["entry"] = entry
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PI_CODING_AGENT_DIR": str(home / "agent"),
    }
    for argv in (["git", "init", "-q"], [str(BIN / "pre-commit"), "install"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
    return root, env


def git_commit(root: Path, env: dict[str, str], *names: str) -> subprocess.CompletedProcess[str]:
    subprocess.run(["git", "add", "--", ".pre-commit-config.yaml", *names], cwd=root, env=env, check=True)
    return subprocess.run(
        ["git", "commit", "-q", "-m", "sessions"], cwd=root, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(shutil.which("git") is None or not (BIN / "pre-commit").exists(), reason="needs git and pre-commit")
@pytest.mark.parametrize(
    ("hook_id", "bad", "shown"),
    [("pitools-validate", "broken-orphan", "orphan-entry"), ("pitools-scan", "secrets-planted", "secret")],
)
def test_real_pre_commit_checks_a_file_named_like_an_option(tmp_path: Path, hook_id: str, bad: str, shown: str) -> None:
    root, env = git_project(tmp_path, hook_id)
    shutil.copy(golden_session("sample-session"), root / "clean.jsonl")
    shutil.copy(golden_session(bad), root / OPTION_LIKE)
    proc = git_commit(root, env, "clean.jsonl", OPTION_LIKE)
    log = proc.stdout + proc.stderr  # git shows the hook's output on stderr
    assert proc.returncode != 0, log
    assert OPTION_LIKE in log and shown in log, log
    # The clean file alone commits.
    subprocess.run(["git", "rm", "-q", "--cached", "--", OPTION_LIKE], cwd=root, env=env, check=True)
    proc = git_commit(root, env, "clean.jsonl")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("git") is None or not (BIN / "pre-commit").exists(), reason="needs git and pre-commit")
def test_real_pre_commit_options_go_in_the_entry(tmp_path: Path) -> None:
    # As .pre-commit-hooks.yaml documents: options before the `--` of an overridden entry.
    root, env = git_project(tmp_path, "pitools-validate", entry="pitools validate --select orphan-entry --")
    shutil.copy(golden_session("broken-orphan"), root / OPTION_LIKE)
    proc = git_commit(root, env, OPTION_LIKE)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "orphan-entry" in log, log
    assert "pi-would-crash" not in log


def test_action_ends_options_before_the_paths() -> None:
    # The bug class of the hooks: every pitools call that takes the paths ends its options first.
    calls = [
        line.strip()
        for step in action()["runs"]["steps"]
        for line in str(step.get("run", "")).splitlines()
        if line.strip().startswith("pitools ") and "paths[@]" in line
    ]
    assert len(calls) == 3
    for call in calls:
        assert '-- "${paths[@]}"' in call, call


def test_action_checks_a_file_named_like_an_option(project: Path) -> None:
    shutil.copy(golden_session("broken-orphan"), project / OPTION_LIKE)
    _status, log, outputs = run_action(project, {"paths": f"{OPTION_LIKE}\nsessions/good.jsonl"})
    assert outputs["validate"]["exit-code"] == "1" and "orphan-entry" in log, log
