"""The warm search (``pitools.cli.fast_search``) behaves exactly as the click ``search``; ``usage``
and ``ls`` are read by click alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pitools.cli.fast_search import parse
from tests.archive_gen import Archive, env_for

ROOT = Path(__file__).resolve().parents[2]


def test_parse_reads_what_click_would() -> None:
    got = parse(["--role", "user", "otter", "--role=assistant", "--limit", "3", "--in-context"])
    assert got is not None
    assert (got["query"], got["roles"], got["limit"], got["in_context"], got["branch"]) == (
        "otter",
        ("user", "assistant"),
        3,
        True,
        "all",
    )


@pytest.mark.parametrize(
    "args",
    [
        [],  # QUERY missing: click's usage error
        ["a", "b"],  # two queries
        ["-h"],
        ["x", "--help"],
        ["x", "--role", "nobody"],  # not a choice
        ["x", "--limit", "-1"],
        ["x", "--limit", "5_0"],
        ["x", "--limit"],  # value missing
        ["x", "--regex=yes"],  # a flag with a value
        ["--", "-x"],
        ["x", "--color", "never"],  # output options stay with click
        ["x", "--since", "-3d"],  # a value that looks like an option
    ],
)
def test_parse_leaves_everything_else_to_click(args: list[str]) -> None:
    assert parse(args) is None


def test_only_search_has_a_way_around_click(archive_env: dict[str, str]) -> None:
    """usage and ls have one parser, click's: a warm usage loads it."""
    _run(archive_env, ["index"], fast=False)
    loaded = _loaded_modules(archive_env, ["usage", "--format", "json"])
    assert "click" in loaded and "pitools.cli.fast_search" not in loaded


@pytest.fixture
def archive_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, **env_for(tmp_path / "agent", tmp_path / "cache", tmp_path / "home"))
    env.pop("PI_CODING_AGENT_SESSION_DIR", None)
    env.update(TZ="UTC", PITOOLS_WIDTH="120")
    ar = Archive(tmp_path / "agent", seed=5)
    p = ar.new("/work/app")
    p.conversation(3)
    p.user("the otter \x1b[31mred\x1b[0m answer")
    p.assistant("otter again")
    p.write()
    c = ar.fork(p, p.leaf)  # type: ignore[arg-type]
    c.conversation(1)
    c.write()
    return env


_CLICK = "import sys; from pitools.cli import main; sys.exit(main(sys.argv[1:], fast=False))"


def _run(env: dict[str, str], args: list[str], *, fast: bool) -> tuple[int, str, str]:
    cmd = [sys.executable, "-m", "pitools", *args] if fast else [sys.executable, "-c", _CLICK, *args]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["usage", "--format", "json"],
        ["usage", "--by", "month", "--breakdown"],
        ["usage", "--by", "session", "--format", "csv"],
        ["usage", "--since", "not a time"],  # a PitoolsError: one line, exit 1
        ["usage", "--timezone", "Mars/Olympus"],
        ["ls", "--all", "--format", "json"],
        ["ls", "--all", "--sort", "cost"],
        ["search", "otter", "--format", "json"],
        ["search", "otter"],
        ["search", "otter", "--role", "user", "--limit", "1", "--format", "json"],
        ["search", "(unclosed", "--regex"],
        # The lean warm path (pitools.cli.fast_search) against click: filters, hostile text.
        ["search", "OTTER red", "--format", "json"],
        ["search", '"otter red"'],  # the session's ESC sequences escaped on output
        ["search", "otter", "--in-context", "--branch", "current", "--thinking"],
        ["search", "otter", "--limit", "0", "--tool", "bash"],
        ["search", "   "],  # no terms: the general path's error
        ["search", "été"],  # a non-ASCII term: the regular-expression matcher
        ["search", "x", "--role", "nobody"],  # not taken by the fast path: click's error either way
    ],
)
def test_fast_path_output_equals_click(archive_env: dict[str, str], args: list[str]) -> None:
    _run(archive_env, ["index"], fast=False)  # both runs then read the same warm index
    fast = _run(archive_env, args, fast=True)
    slow = _run(archive_env, args, fast=False)
    assert fast == slow


def _loaded_modules(env: dict[str, str], args: list[str]) -> list[str]:
    """The modules ``pitools ARGS`` imports from its own start on (site's are left out: the dev
    venv's editable-install hook imports re, pathlib and more before pitools starts)."""
    # The fast path ends with os._exit (no teardown), so the modules it loaded are read from
    # -X importtime's report on stderr rather than from sys.modules at exit.
    code = f"import sys; sys.argv = ['pitools', *{args!r}]\nfrom pitools.cli import console_main\nconsole_main()\n"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    names = [line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    # importtime lists a module after the ones it imported: pitools' first child (__future__)
    # comes just before the first pitools line.
    first = next(i for i, name in enumerate(names) if name.startswith("pitools"))
    return names[first - 1 :]


def test_warm_usage_loads_no_indexing_code(archive_env: dict[str, str]) -> None:
    """On a warm index, usage answers without the indexing code (nor rich, for JSON)."""
    _run(archive_env, ["index"], fast=False)
    heavy = ["rich", "pydantic", "pitools.ops.index_update", "pitools.ops.index_rows", "hashlib"]
    loaded = _loaded_modules(archive_env, ["usage", "--format", "json"])
    assert "pitools.ops.archive" in loaded  # the report was read
    assert [m for m in heavy if m in loaded] == []


def test_warm_search_loads_only_what_it_needs(archive_env: dict[str, str]) -> None:
    """The warm search path (pitools.cli.fast_search): none of the big start-up costs."""
    _run(archive_env, ["index"], fast=False)
    loaded = _loaded_modules(archive_env, ["search", "otter", "--format", "json"])
    assert "pitools.cli.fast_search" in loaded and "pitools.ops.search_core" in loaded
    heavy = [
        *("click", "rich", "pydantic", "orjson", "typing", "dataclasses", "inspect", "re", "json"),
        *("pathlib", "zoneinfo", "datetime", "sqlite3", "shlex", "enum", "urllib.parse", "threading"),
        *("pitools.cli.output", "pitools.ops.index", "pitools.ops.archive", "pitools.ops.search"),
        *("pitools.core.session.locate", "pitools.piconfig", "pitools.core.js.json.encode"),
    ]
    assert [m for m in heavy if m in loaded] == []


def test_warm_human_search_in_a_pipe_loads_no_rich(archive_env: dict[str, str]) -> None:
    """Human output without colour (a pipe) is written as plain text: no rich, re, typing, datetime
    or output layer (the index's times are told relative without datetime)."""
    _run(archive_env, ["index"], fast=False)
    pipe = {k: v for k, v in archive_env.items() if k != "PITOOLS_WIDTH"}  # no width: a plain pipe
    loaded = _loaded_modules(pipe, ["search", "otter"])
    assert "pitools.cli.fast_search" in loaded and "pitools.render.search_hits" in loaded
    heavy = [
        *("click", "rich", "pydantic", "orjson", "typing", "dataclasses", "inspect", "re", "json"),
        *("pathlib", "zoneinfo", "datetime", "sqlite3", "shlex", "enum", "urllib.parse", "threading"),
        *("pitools.cli.output", "pitools.ops.index", "pitools.ops.archive", "pitools.ops.search"),
        *("pitools.render.archive", "pitools.render.safe", "pitools.render.vocab", "pitools.core.js.json.encode"),
    ]
    assert [m for m in heavy if m in loaded] == []


@pytest.mark.parametrize("args", [["search", "otter"], ["search", "answer"], ["search", "otter", "--limit", "1"]])
def test_plain_human_search_equals_rich(archive_env: dict[str, str], args: list[str]) -> None:
    """The lean path's plain text against the general path's rich console (a width of 1,000,000,
    what a pipe gets, keeps rich) on the same warm index: the same bytes."""
    _run(archive_env, ["index"], fast=False)
    plain = _run({k: v for k, v in archive_env.items() if k != "PITOOLS_WIDTH"}, args, fast=True)
    rich = _run({**archive_env, "PITOOLS_WIDTH": "1000000"}, args, fast=False)
    assert plain == rich
    assert plain[1].count("\n") >= 2
