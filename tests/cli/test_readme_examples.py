"""The README's promises and the commands agree: every `pitools ...` example in it runs.

Each example line of a ```sh block is run in a private agent folder that holds the bundled
sample (so the README's id prefix 0195f2a4 finds it) and copies of it under the names the
examples use (session.jsonl, big.jsonl, ...). An example may fail on a name that stands for the
reader's own data (exit 1: an unknown --leaf, a file that is not broken), but never with a usage
error (2), an internal error (3) or a traceback; examples on the sample itself must succeed.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import support

README = (support.ROOT / "README.md").read_text(encoding="utf-8")
SAMPLE = support.ROOT / "examples" / "sample-session.jsonl"
#: Examples that need the network, a paid model, another program, or the user's shell; and
#: `pitools serve`, which runs until Ctrl-C (tests/cli/test_serve_cli.py starts and stops it), as
#: does `pitools watch` without --once (tests/cli/test_watch_cli.py runs it in a pty).
SKIP = re.compile(
    r"--apply --model (?!builtin)|--summarize --label|--base-url|--endpoint|\$|\||duckdb|--tokenizer|eval "
    r"|^pitools help|^pitools serve|^pitools watch(?!.* --once)"
)


#: Why an example may exit 1 here: its entry id, label or baseline is the reader's, not the sample's;
#: the sample is too short for Pi to find anything to compact.
PLACEHOLDER_FAILURES = re.compile(
    r"matches no entry id, id prefix or label|nothing to compact|cannot read the baseline"
)


def _examples() -> list[str]:
    found: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith("pitools ") and not SKIP.search(command):
                found.append(command)
    return found


EXAMPLES = _examples()


def test_the_readme_has_examples_for_every_command() -> None:
    from pitools.cli import COMMANDS

    used = {shlex.split(c)[1] for c in EXAMPLES}
    # `serve` runs until Ctrl-C: its README example is skipped here and run by tests/cli/test_serve_cli.py.
    assert set(COMMANDS) - used <= {"help", "serve"}, set(COMMANDS) - used


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    project = home / "src" / "app"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.setenv("PITOOLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.chdir(project)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0]) | {"cwd": str(project)}
    folder = home / ".pi" / "agent" / "sessions" / ("--" + str(project).strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True)
    (folder / f"2026-03-14T09-30-00-000Z_{header['id']}.jsonl").write_text(
        json.dumps(header, separators=(",", ":")) + "\n" + "".join(lines[1:]), encoding="utf-8"
    )
    for name in (
        "session.jsonl",
        "big.jsonl",
        "broken.jsonl",
        "old.jsonl",
        "a.jsonl",
        "b.jsonl",
        "run.jsonl",
        "s.jsonl",
    ):
        shutil.copy(SAMPLE, project / name)
    (project / "sessions").mkdir()
    shutil.copy(SAMPLE, project / "sessions" / "one.jsonl")
    (project / "examples").mkdir()
    shutil.copy(SAMPLE, project / "examples" / "sample-session.jsonl")
    return project


@pytest.mark.parametrize("example", EXAMPLES)
def test_readme_example_runs(place: Path, example: str) -> None:
    argv = shlex.split(example)[1:]
    if ">" in argv:
        argv = argv[: argv.index(">")]
    argv = [str(Path(a).expanduser()) if a.startswith("~") else a for a in argv]
    result = CliRunner().invoke(support.PITOOLS, argv, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), (example, result.exception)
    assert "Traceback" not in result.output
    allowed = (0,) if "examples/sample-session.jsonl" in example else (0, 1)
    assert result.exit_code in allowed, f"{example}: exit {result.exit_code}\n{result.stdout}\n{result.stderr}"
    if result.exit_code:  # only for a name that stands for the reader's own data
        assert PLACEHOLDER_FAILURES.search(result.stderr), f"{example}: {result.stderr}"
