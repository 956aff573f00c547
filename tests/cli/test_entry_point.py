"""The one entry point (``pitools.cli.main``) and the one error handler (``pitools.cli.errors``)."""

from __future__ import annotations

import errno
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pitools.cli import EXIT_FAILURE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Environment, main
from pitools.cli.errors import guarded
from pitools.errors import PitoolsError
from tests import support

SEED = support.GOLDEN / "seed-running-example" / "session.jsonl"
SAMPLE = support.ROOT / "examples" / "sample-session.jsonl"


def _env(**environ: str) -> Environment:
    return Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), environ=environ)


def _raising(exc: BaseException) -> Callable[[], int]:
    def body() -> int:
        raise exc

    return body


@pytest.mark.parametrize(
    ("exc", "status", "line"),
    [
        (PitoolsError("run.jsonl:17: parentId 'a1' matches no entry"), EXIT_FAILURE, "pitools: run.jsonl:17: "),
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "pitools: interrupted"),
        (BrokenPipeError(errno.EPIPE, "Broken pipe"), EXIT_OK, ""),
        (RecursionError(), EXIT_FAILURE, "pitools: a value in the session nests deeper"),
        (OSError(errno.ENOSPC, "No space left on device", "out.md"), EXIT_FAILURE, "pitools: cannot write out.md: "),
        (ZeroDivisionError("bug"), EXIT_INTERNAL, "pitools: internal error (ZeroDivisionError: bug); this is a bug"),
    ],
)
def test_the_handler_maps_each_kind_of_error_to_one_line_and_a_status(
    exc: BaseException, status: int, line: str
) -> None:
    env = _env()
    assert guarded(_raising(exc), env) == status
    err = env.stderr.getvalue()
    assert err.startswith(line) and err.count("\n") == (1 if line else 0)
    assert env.stdout.getvalue() == ""


@pytest.mark.parametrize("exc", [ZeroDivisionError("bug"), RecursionError()])
def test_debug_lets_a_bug_show_its_traceback(exc: BaseException) -> None:
    with pytest.raises(type(exc)):
        guarded(_raising(exc), _env(PITOOLS_DEBUG="1"))
    with pytest.raises(type(exc)):
        guarded(_raising(exc), Environment(stdout=io.StringIO(), stderr=io.StringIO(), environ={}, debug=True))


def test_bad_input_never_shows_a_traceback_even_with_debug() -> None:
    env = _env(PITOOLS_DEBUG="1")
    assert guarded(_raising(PitoolsError("bad")), env) == EXIT_FAILURE
    assert env.stderr.getvalue() == "pitools: bad\n"


def test_the_message_is_made_safe_and_kept_on_one_line() -> None:
    env = _env()
    guarded(_raising(PitoolsError("evil\x1b]0;title\x07\nsecond line")), env)
    err = env.stderr.getvalue()
    assert "\x1b" not in err and "\x07" not in err and err.count("\n") == 1


def test_main_runs_a_command_on_the_streams_it_is_given() -> None:
    env = _env()
    assert main(["validate", str(SAMPLE), "--format", "json"], env) == EXIT_OK
    assert json.loads(env.stdout.getvalue())["files"][0]["path"] == str(SAMPLE)
    assert env.stderr.getvalue() == ""


def test_main_reports_a_command_error_on_its_stderr(tmp_path: Path) -> None:
    env = _env()
    assert main(["inspect", str(tmp_path / "missing.jsonl")], env) == EXIT_FAILURE
    assert env.stdout.getvalue() == "" and env.stderr.getvalue().startswith("pitools: ")


def test_main_usage_errors_are_2_on_its_stderr() -> None:
    env = _env()
    assert main(["inspect", "--no-such-option"], env) == EXIT_USAGE
    assert "No such option" in env.stderr.getvalue()


def test_debug_option_reaches_the_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    import pitools.core.context.build as context

    def boom(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(context, "replay_context", boom)
    env = _env()
    assert main(["context", str(SEED)], env) == EXIT_INTERNAL
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "context", str(SEED)], _env())
    with pytest.raises(ZeroDivisionError):
        main(["context", str(SEED), "--debug"], _env())


def test_the_fast_path_and_click_share_the_handler(tmp_path: Path) -> None:
    """A PitoolsError from the click-free path and from click: the same line, the same status
    (an unreadable --since is a usage error, exit 2, on both)."""
    args = ["usage", "--since", "not a time", "--session-dir", str(tmp_path)]
    fast, slow = _env(), _env()
    assert main(args, fast) == main(args, slow, fast=False) == EXIT_USAGE
    assert fast.stderr.getvalue() == slow.stderr.getvalue()
    assert fast.stderr.getvalue().startswith("pitools: ") and fast.stderr.getvalue().count("\n") == 1


def test_there_is_one_error_handler() -> None:
    """Exit statuses and error lines are decided in pitools/cli/errors.py only."""
    root = support.ROOT / "pitools"
    for path in root.rglob("*.py"):
        if path == root / "cli" / "errors.py":
            continue
        text = path.read_text()
        assert "pitools: interrupted" not in text, path
        assert not re.search(r"\bunexpected_error\(|\binternal_error_message\(", text), path
        assert not re.search(r"except KeyboardInterrupt:\n\s++(?!raise\b)", text), path


def test_main_reads_a_session_on_dash_from_the_stdin_it_is_given() -> None:
    # '-' reads the run's stdin (the Environment's), not the process's: an embedding program's
    # session text, here a golden case with findings, gives the same answer as the file itself.
    text = SEED.read_text(encoding="utf-8")
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(text), environ={})
    direct = _env()
    assert main(["validate", "-", "--format", "json"], env) == main(["validate", str(SEED), "--format", "json"], direct)
    from_stdin = json.loads(env.stdout.getvalue())["files"][0]
    from_file = json.loads(direct.stdout.getvalue())["files"][0]
    assert from_stdin["findings"] == from_file["findings"] != []
