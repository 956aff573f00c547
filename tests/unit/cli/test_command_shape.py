"""Commands are parse → build → run → render: the use cases answer from Python exactly as the
commands print them, the shared option objects check what they promise, and no helper looks
the output up behind the command's back."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import click
import orjson
import pytest

from tests.support import ROOT, golden_session

SEED = str(golden_session("seed-running-example"))


def _main(*args: str) -> tuple[int, bytes, str]:
    """``pitools args`` through the real entry point; (status, stdout bytes, stderr)."""
    from pitools.cli import Environment, main

    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", newline="")
    status = main(list(args), Environment(stdout=stdout, stderr=err, environ={"COLUMNS": "100"}))
    stdout.flush()
    return status, out.getvalue(), err.getvalue()


# -- the use cases, called as a library ---------------------------------------------------------


@pytest.mark.parametrize("leaf", [None, "A3", "C1"])
def test_plan_compact_is_what_compact_dry_run_prints(leaf: str | None) -> None:
    from pitools.ops.compaction import plan_compact

    args = ["compact", SEED, "--dry-run", "--format", "json", "--no-config", "--keep-recent-tokens", "300"]
    status, printed, _ = _main(*args, *(["--leaf", leaf] if leaf else []))
    assert status == 0
    planning = plan_compact(SEED, leaf, keep_recent_tokens=300, use_config=False)
    assert b"".join(planning.plan.json_chunks(None)) + b"\n" == printed
    # --apply reads everything; the plan is the same.
    kept_all = plan_compact(SEED, leaf, keep_recent_tokens=300, use_config=False, for_apply=True)
    assert b"".join(kept_all.plan.json_chunks(None)) == printed.rstrip(b"\n")


@pytest.mark.parametrize(("leaf", "to"), [(None, "A2"), ("A3", "C1"), ("A6", "U2B")])
def test_setup_navigation_is_what_navigate_dry_run_prints(leaf: str | None, to: str) -> None:
    from pitools.core.session.load import load
    from pitools.ops.navigate import setup_navigation

    args = ["navigate", SEED, "--to", to, "--format", "json", "--no-config"]
    status, printed, _ = _main(*args, *(["--leaf", leaf] if leaf else []))
    assert status == 0
    setup = setup_navigation(load(SEED), to, leaf, use_config=False)
    data = orjson.loads(printed)
    assert setup.plan().to_json() == {k: v for k, v in data.items() if k not in ("systemPrompt", "written")}
    assert data["written"] is False


def test_setup_navigation_names_to_in_its_error() -> None:
    from pitools.core.session.load import load
    from pitools.errors import LeafError
    from pitools.ops.navigate import setup_navigation

    with pytest.raises(LeafError, match="--to"):
        setup_navigation(load(SEED), "no-such-entry", use_config=False)


def test_migrate_use_case_writes_nothing_for_check(tmp_path: Path) -> None:
    from pitools.ops.migrate import migrate

    v1 = tmp_path / "v1.jsonl"
    v1.write_bytes(
        b'{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/r"}\n'
        b'{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"hi"}}\n'
    )
    before = v1.read_bytes()
    sent: list[bytes] = []
    result = migrate(str(v1), output=None, in_place=False, check=True, backup=True, force=False, to_stdout=sent.extend)
    assert result["needed"] is True and result["written"] is None and sent == []
    assert v1.read_bytes() == before
    result = migrate(str(v1), output="-", in_place=False, check=False, backup=True, force=False, to_stdout=sent.extend)
    assert result["written"] == "-" and b"".join(sent).count(b"\n") == 2 and b'"version":3' in sent[0]


# -- the shared option objects ------------------------------------------------------------------


def test_rewrite_args_checks() -> None:
    from pitools.cli.option_groups import RewriteArgs

    RewriteArgs(output="o.jsonl", in_place=False, no_backup=False).check()
    RewriteArgs(output=None, in_place=True, no_backup=True).check()
    cases = {
        RewriteArgs(output="o", in_place=True, no_backup=False): "only one of -o/--output and --in-place",
        RewriteArgs(output="o", in_place=False, no_backup=False, dry_run=True): "--dry-run writes nothing",
        RewriteArgs(output="o", in_place=False, no_backup=True): "--no-backup only applies to --in-place",
    }
    for args, message in cases.items():
        with pytest.raises(click.UsageError, match=re.escape(message)):
            args.check()


def test_summarizer_args_name_what_was_given() -> None:
    from pitools.cli.option_groups import SummarizerArgs

    given = SummarizerArgs("builtin", None, "focus", "o.jsonl", True, True, 600.0)
    assert given.given() == ["--model", "--instructions", "-o", "--no-backup", "--yes"]
    with pytest.raises(click.UsageError, match=r"^--model, --instructions, -o, --no-backup, --yes only apply to X$"):
        given.check(writes=False, when="to X")
    with pytest.raises(click.UsageError, match="--no-backup has no effect with -o"):
        given.check(writes=True, when="to X")
    SummarizerArgs(None, None, None, None, False, False, 600.0).check(writes=False, when="to X")


def test_plan_view_only_applies_to_the_dry_run() -> None:
    from pitools.cli.option_groups import PlanArgs

    PlanArgs(None, None, False, show_prompt=True, list_entries=True).check(writes=False, dry_run="--dry-run")
    with pytest.raises(click.UsageError, match=r"^--entries only applies to the dry run$"):
        PlanArgs(None, None, False, show_prompt=False, list_entries=True).check(writes=True, dry_run="the dry run")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compact", SEED, "--dry-run", "--yes"], "--yes only apply to --apply"),
        (["compact", SEED, "--apply", "--entries"], "--entries only applies to --dry-run"),
        (["navigate", SEED, "--to", "A2", "-o", "x.jsonl"], "-o only apply with --summarize or --label"),
        (["navigate", SEED, "--to", "A2", "--label", "x", "--model", "builtin"], "only apply with --summarize"),
        (["repair", SEED, "-o", "x", "--in-place"], "use only one of -o/--output and --in-place"),
        (["redact", SEED, "-o", "x.jsonl", "--no-backup"], "--no-backup only applies to --in-place"),
        (["migrate", SEED, "--no-backup"], "--no-backup only applies to --in-place"),
    ],
)
def test_usage_errors_from_the_shared_checks(args: list[str], message: str) -> None:
    status, printed, err = _main(*args)
    assert (status, printed) == (2, b"")
    assert message in err


def test_the_command_table_names_every_command_module() -> None:
    import importlib

    from pitools.cli.registry import COMMANDS

    assert len(COMMANDS) >= 20
    files = {p.stem for p in (ROOT / "pitools" / "cli" / "commands").glob("*.py") if not p.stem.startswith("_")}
    assert set(COMMANDS) == files
    for name, (module, summary) in COMMANDS.items():
        assert module == f"pitools.cli.commands.{name}"
        assert summary and summary == summary.strip() and summary.endswith(".")
        command: Any = importlib.import_module(module).command
        assert command.name == name


# -- the output object is passed, never looked up ------------------------------------------------


def test_only_the_output_layer_builds_the_output() -> None:
    """Commands receive the Output (``pass_output``) and hand it down; nothing else in the
    package finds it through click's context."""
    offenders = []
    for path in (ROOT / "pitools").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name != "output.py" and re.search(r"\b(get_output|_run_output)\b|META_OUTPUT", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


#: Where the process's own stdout/stderr may be named: the output layer, the Environment that
#: defaults to them, the entry point's exit-time flush and the error handler's broken-pipe fix.
PROCESS_STREAM_MODULES = {"cli/output.py", "cli/environment.py", "cli/__init__.py", "cli/errors.py"}


def test_nothing_writes_to_the_process_streams_behind_the_output() -> None:
    """Progress, warnings and messages go to the run's Output (a test or an embedding program
    passes its own streams): no module outside the output layer names ``sys.stdout``/
    ``sys.stderr`` or calls the bare ``print``."""
    import ast

    offenders = []
    for path in sorted((ROOT / "pitools").rglob("*.py")):
        where = path.relative_to(ROOT / "pitools").as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
                and node.attr in ("stdout", "stderr", "__stdout__", "__stderr__")
            )
            printed = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
            if (named and where not in PROCESS_STREAM_MODULES) or printed:
                offenders.append(f"{where}:{getattr(node, 'lineno', 0)}")
    assert offenders == []


def test_write_chunks_to_writes_a_new_file_or_stdout(tmp_path: Path) -> None:
    from pitools.cli.output import Output

    stdout, stderr = io.StringIO(), io.StringIO()
    out = Output(stdout=stdout, stderr=stderr)
    out.write_chunks_to(None, iter([b"a\n", b"b\n"]))
    assert stdout.getvalue() == "a\nb\n"
    target = tmp_path / "t.txt"
    out.write_chunks_to(str(target), iter([b"x", b"y"]))
    assert target.read_bytes() == b"xy"
    assert stderr.getvalue() == f"pitools: wrote {target}\n"
    from pitools.errors import PitoolsError

    with pytest.raises(PitoolsError):  # never replaces a file
        out.write_chunks_to(str(target), iter([b"z"]))
    assert target.read_bytes() == b"xy"


# -- one "how long ago" --------------------------------------------------------------------------


def test_age_buckets_agree_between_the_search_fast_path_and_vocab() -> None:
    import datetime as dt

    from pitools.render.age import age_text
    from pitools.render.search_hits import ago as fast_ago
    from pitools.render.vocab import ago

    assert age_text(0) == "just now"
    assert age_text(59_999_999) == "just now"
    assert age_text(60_000_000) == "1 min ago"
    assert age_text(3_600_000_000) == "1 h ago"
    assert age_text(86_400_000_000 * 13 + 1) == "13 d ago"
    assert age_text(86_400_000_000 * 14) is None
    now = dt.datetime(2026, 7, 29, 12, 0, 0, tzinfo=dt.UTC)
    for seconds in (0, 1, 59, 60, 61, 3599, 3600, 86399, 86400, 86400 * 14 - 1, 86400 * 14, 86400 * 400):
        stamp = (now - dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        assert fast_ago(stamp, now) == ago(stamp, now), stamp
