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


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help_with_an_example(run, name: str) -> None:
    r = run(name, "--help", env={"COLUMNS": "100"})
    assert "Example" in r.stdout, f"pitools {name} --help has no example"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_is_documented_in_the_readme(name: str) -> None:
    assert (
        re.search(rf"^## pitools {re.escape(name)}\b", README, re.M) or f"## pitools fork and pitools {name}" in README
    )


def test_readme_opens_with_the_two_setup_commands() -> None:
    first = [line for line in README.splitlines()[:5] if line and not line.startswith("```")]
    assert first[0].startswith("make run") and first[1].startswith("make test")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_exit_codes_are_documented() -> None:
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in README


def test_version(run) -> None:
    assert "pitools 0.1.0" in run("--version").stdout


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
        "import sys; from pitools.cli import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('rich', 'pydantic', 'jsonschema', 'tiktoken', 'httpx', 'orjson',"
        " 'pitools.core.session.tree') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "HEAVY="


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
