"""The command group: help, version, exit codes, lazy imports, and docs that stay honest."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pitools.cli import COMMANDS, cli
from tests import support
from tests.golden.test_conformance import GOLDEN

ROOT = support.ROOT
README = (ROOT / "README.md").read_text()
SEED = GOLDEN / "seed-running-example" / "session.jsonl"


def test_help_lists_every_command(run, snapshot) -> None:
    r = run("--help", env={"COLUMNS": "100"})
    for name in COMMANDS:
        assert name in r.stdout
    assert r.stdout == snapshot
    # `help` is about pitools itself: listed last, after every command that works on sessions.
    listed = re.findall(r"^  (\w+) ", r.stdout.split("Commands:")[1], re.M)
    assert listed[-1] == "help" and sorted(listed) == sorted(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help_with_an_example(run, name: str) -> None:
    r = run(name, "--help", env={"COLUMNS": "100"})
    assert "Example" in r.stdout, f"pitools {name} --help has no example"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_is_documented_in_the_readme(name: str) -> None:
    assert (
        re.search(rf"^## pitools {re.escape(name)}\b", README, re.M) or f"## pitools fork and pitools {name}" in README
    )


def test_readme_opens_with_the_setup_and_test_commands() -> None:
    # Exactly two set-up commands: run the main job on the sample; run the tests (what CI runs).
    first = [line for line in README.splitlines()[:5] if line and not line.startswith("```")]
    assert len(first) == 2 and first[0].startswith("make run") and first[1].startswith("make check")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make check" in ci
    makefile = (ROOT / "Makefile").read_text()
    check = re.search(r"^check: (.*)$", makefile, re.M)
    assert check is not None and check.group(1).split() == ["lint", "test-all", "floor-guard"]
    assert re.search(
        r"^floor-guard: .*\n\t\$\(BIN\)/python scripts/floor_guard.py --check bench/floor-ratios.json", makefile, re.M
    )
    # make test skips the slow tests; make check (CI) runs every test.
    assert re.search(r"^test: .*\n\t\$\(PYTEST\) -m \"not slow\"$", makefile, re.M)
    assert re.search(r"^test-all: .*\n\t\$\(PYTEST\)$", makefile, re.M)


def test_exit_codes_are_documented() -> None:
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in README


def test_version(run) -> None:
    from pitools import __version__

    assert run("--version").stdout == f"pitools {__version__} (Pi 1.6.0 semantics)\n"


def test_unknown_command_is_usage_error(run) -> None:
    run("nope", exit_code=2)


def test_internal_error_is_exit_3_with_a_hint(run, monkeypatch: pytest.MonkeyPatch) -> None:
    import pitools.core.context.build as context

    def boom(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(context, "replay_context", boom)
    r = run("context", SEED, exit_code=3)
    assert "internal error" in r.stderr and "--debug" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(ZeroDivisionError):
        run("--debug", "context", SEED)


def test_keyboard_interrupt_is_130(run, monkeypatch: pytest.MonkeyPatch) -> None:
    import pitools.core.context.build as context

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(context, "replay_context", interrupted)
    assert "interrupted" in run("context", SEED, exit_code=130).stderr


def test_help_imports_no_heavy_module() -> None:
    code = (
        "import sys; from pitools.cli import main\n"
        "main(['--help'])\n"
        "heavy = [m for m in ('rich', 'pydantic', 'jsonschema', 'tiktoken', 'httpx', 'orjson',"
        " 'pitools.core.session.tree') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "HEAVY="


@pytest.mark.parametrize(
    ("args", "unneeded"),
    [
        # A FILE that is a path is taken as it is: no session finder and no Pi config files.
        (["context", str(SEED), "--format", "json"], ["pitools.core.session.locate", "pitools.piconfig"]),
        (["tree", str(SEED)], ["pitools.core.session.locate", "pitools.cli.option_groups"]),
        # inspect names where Pi would throw, without the branch views that draw trees.
        (["inspect", str(SEED), "--format", "json"], ["pitools.core.views.branches", "pitools.piconfig"]),
        # The dry run plans: the model dialog (ops.summarizing) and the progress spinner wait for --apply.
        (
            ["compact", str(SEED), "--dry-run", "--no-config", "--format", "json"],
            ["pitools.ops.summarizing", "pitools.cli.progress", "pitools.core.session.locate"],
        ),
        (["validate", str(SEED)], ["pitools.core.session.locate", "pitools.cli.option_groups"]),
    ],
)
def test_a_command_on_a_file_imports_only_what_it_uses(args: list[str], unneeded: list[str]) -> None:
    """Start-up is most of a run on a small file: each of these modules costs 1-5 ms to import."""
    code = (
        f"import sys; from pitools.cli import main\nstatus = main({args!r})\n"
        f"print('STATUS=%d LOADED=%s' % (status, ','.join(m for m in {unneeded!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] in ("STATUS=0 LOADED=", "STATUS=1 LOADED=")


def test_python_dash_m(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "pitools", "context", str(SEED), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0 and '"leafId":"C1"' in r.stdout


def test_group_is_importable_without_side_effects() -> None:
    assert cli.name in ("cli", "pitools")


def test_the_sample_that_make_run_shows_is_clean(run) -> None:
    sample = ROOT / "examples" / "sample-session.jsonl"
    assert "SAMPLE := examples/sample-session.jsonl" in (ROOT / "Makefile").read_text()
    assert "examples/sample-session.jsonl" in README.splitlines()[1]
    assert run("validate", sample, "--strict").stdout.startswith("1 file checked: no problems found")
    inspected = run("inspect", sample).stdout
    assert "Pi's own stats would fail" not in inspected and "0 errors, 0 warnings, 0 info" in inspected
    assert "unknown model" not in run("context", sample).stdout


def test_bare_pitools_and_help_command_print_the_help(run) -> None:
    bare = run()
    assert bare.stdout.startswith("Usage: ") and "Commands:" in bare.stdout and "help " in bare.stdout
    assert run("help").stdout == bare.stdout
    assert run("help", "tree").stdout == run("tree", "--help").stdout
    assert "Did you mean 'tree'?" in run("help", "trea", exit_code=2).stderr


def test_did_you_mean_for_commands_and_options(run) -> None:
    assert "Did you mean 'inspect'?" in run("inspct", exit_code=2).stderr
    assert "Did you mean '--format'?" in run("inspect", SEED, "--formt", "json", exit_code=2).stderr


def _complete(words: str, cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    import os

    full = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    full.update({"_PITOOLS_COMPLETE": "bash_complete", **(env or {})})
    r = subprocess.run(
        [sys.executable, "-m", "pitools"], capture_output=True, text=True, env=full, cwd=cwd, check=False
    )
    assert r.returncode == 0, r.stderr
    return [line.split(",", 1)[1] for line in r.stdout.splitlines() if "," in line]


def test_shell_completion_of_commands_leaves_labels_and_session_ids(tmp_path: Path) -> None:
    import shutil

    sample = ROOT / "examples" / "sample-session.jsonl"
    assert "tree" in _complete("pitools tr", tmp_path)
    assert _complete("pitools context s.jsonl --leaf 39", ROOT / "examples") == []  # no such file
    shutil.copy(sample, tmp_path / "s.jsonl")
    assert _complete("pitools context s.jsonl --leaf 39", tmp_path) == ["39b7f4d0"]
    assert _complete("pitools fork s.jsonl --at tests", tmp_path) == ["tests-green"]
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(sample, sessions / "one.jsonl")
    ids = _complete("pitools inspect 0195", tmp_path, {"PI_CODING_AGENT_SESSION_DIR": str(sessions)})
    assert "0195f2a4-7c1e-7b3a-9d20-5e6f8a1b2c3d" in ids
    for shell in ("bash", "zsh", "fish"):
        script = subprocess.run(
            [sys.executable, "-m", "pitools"],
            capture_output=True,
            text=True,
            env={**__import__("os").environ, "_PITOOLS_COMPLETE": f"{shell}_source"},
            check=True,
        ).stdout
        assert "_PITOOLS_COMPLETE" in script
