"""The warm search path (pitools.cli.fast_search) answers exactly as the general search, and only
when it may: any change to the archive, the index or the configuration sends it to the general path."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pitools.cli import fast_search
from pitools.cli.environment import Environment
from pitools.ops.archive import archive_scope, updated_index
from pitools.ops.index import inside_pi_folders
from pitools.ops.queries import SearchQuery, SessionFilter
from pitools.ops.search import search
from tests.archive_gen import Archive, Writer, private_pi_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    agent = tmp_path / "agent"
    private_pi_env(tmp_path, monkeypatch)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    ar = Archive(agent, seed=11)
    p = ar.new("/work/app")
    p.conversation(4)
    p.user("the narwhal teapot sings")
    p.assistant("a NARWHAL answer with a teapot", tool=("edit", {"path": "narwhal.py", "n": 1.5}))
    p.assistant(
        "running it", tool=("bash", {"command": "grep -rn walrus .", "timeout": 30, "env": {"A": [True, None]}})
    )
    p.user("Kelvin: \u212aelvin narwhal, dotted \u0130stanbul narwhal")
    p.write()
    f = ar.fork(p, p.entries[3]["id"])
    f.user("narwhal on the fork")
    f.write()
    q = ar.new("/work/other")
    q.conversation(2)
    q.assistant("narwhal", thinking="a teapot in thinking only")
    q.write()
    _settled(p.path, f.path, q.path)
    index, _ = updated_index(archive_scope())
    index.close()
    return {"env": dict(os.environ), "tmp": tmp_path, "p": p, "q": q, "agent": agent}


def _settled(*paths: Path) -> None:
    """Date files 10 s back, as sessions Pi wrote a moment ago: a file written in the clock tick an
    update starts is read again by the next update (pitools.ops.index.racy), so the warm path
    rightly leaves it to the general one; these tests are about other changes."""
    then = time.time_ns() - 10_000_000_000
    for path in paths:
        os.utime(path, ns=(then, then))


def _general(args: list[str]) -> dict[str, Any]:
    kw = fast_search.parse(args)
    assert kw is not None
    scope = archive_scope()
    index, _ = updated_index(scope)
    try:
        query = SearchQuery(
            kw["query"],
            thinking=kw["thinking"],
            roles=kw["roles"],
            tools=kw["tools"],
            in_context=kw["in_context"],
            branch=kw["branch"],
            limit=kw["limit"],
            where=SessionFilter(project=kw["project"], session=kw["session"]),
        )
        result = search(index, scope, query)
    finally:
        index.close()
    data: dict[str, Any] = result.to_json()
    return data


def _warm(args: list[str]) -> dict[str, Any] | None:
    kw = fast_search.parse(args)
    assert kw is not None
    return fast_search.warm_search(kw, os.environ)


@pytest.mark.parametrize(
    "args",
    [
        ["narwhal"],
        ["narwhal", "--limit", "2"],
        ["narwhal", "--limit", "0"],
        ["NARWHAL teapot"],
        ['"narwhal teapot"'],
        ["kelvin"],
        ["istanbul"],
        ["narwhal.py"],
        ["narwhal", "--role", "assistant", "--tool", "edit"],
        ["narwhal", "--in-context"],
        ["narwhal", "--branch", "current"],
        ["teapot", "--thinking"],
        ["teapot"],
        ["nothing-matches-this"],
        ["walrus", "--tool", "bash"],  # tool-call arguments written without orjson
        ["narwhal", "--project", "APP"],
        ["narwhal", "--project", "/work/oth", "--limit", "0"],
        ["narwhal", "--session", "agent/sessions/--work-app--"],
        ["narwhal", "--session", "%_\\"],  # LIKE's wildcards taken literally
        ["narwhal", "--session", "nothing"],
        ["日本"],  # no hit, through the regular-expression matcher
    ],
)
def test_warm_search_equals_the_general_search(home: dict[str, Any], args: list[str]) -> None:
    warm = _warm(args)
    assert warm is not None
    assert warm == _general(args)


def test_session_ids_and_paths_select_the_same_sessions(home: dict[str, Any]) -> None:
    p: Writer = home["p"]
    for ref in (p.header["id"], p.header["id"][:6], str(p.path), os.path.relpath(p.path), p.path.name[:12]):
        warm = _warm(["narwhal", "--session", ref])
        assert warm is not None and warm == _general(["narwhal", "--session", ref])
        if ref != p.path.name[:12]:  # a part of the path: every session of that day
            assert {h["session"]["path"] for h in warm["hits"]} == {str(p.path)}, ref


def test_any_change_sends_search_to_the_general_path(home: dict[str, Any]) -> None:
    p: Writer = home["p"]
    assert _warm(["narwhal"]) is not None
    # Appended (Pi writing to a running session).
    n = len(p.entries)
    p.user("narwhal appended")
    p.append(n)
    _settled(p.path)
    assert _warm(["narwhal"]) is None
    assert "narwhal appended" in str(_general(["narwhal", "--limit", "0"]))
    assert _warm(["narwhal"]) is not None  # the general path brought the index up to date
    # Rewritten in place with the same size (a label rewrite): mtime differs.
    data = p.path.read_bytes()
    st = p.path.stat()
    p.path.write_bytes(data)
    os.utime(p.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _warm(["narwhal"]) is None
    _general(["narwhal"])
    # Replaced by another file (a new inode).
    tmp = p.path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.utime(tmp, ns=(st.st_atime_ns, p.path.stat().st_mtime_ns))
    os.replace(tmp, p.path)
    assert _warm(["narwhal"]) is None
    _general(["narwhal"])
    # Deleted; then a new session.
    q: Writer = home["q"]
    q.path.unlink()
    assert _warm(["narwhal"]) is None
    _general(["narwhal"])
    assert _warm(["narwhal"]) is not None
    q.write()
    _settled(q.path)  # a file written in the tick an update starts is read again by the next one
    assert _warm(["narwhal"]) is None
    _general(["narwhal"])
    # A non-session file or folder does not matter; a new project folder with a session does.
    (p.path.parent / "notes.txt").write_text("narwhal")
    assert _warm(["narwhal"]) is not None
    ar = Archive(home["agent"], seed=12)
    r = ar.new("/work/third")
    r.conversation(1)
    r.write()
    _settled(r.path)
    assert _warm(["narwhal"]) is None
    assert _warm(["narwhal"]) is None  # nothing updated the index in between
    assert _general(["narwhal"]) == _warm(["narwhal"])


def test_an_unfinished_update_or_a_running_updater_sends_it_to_the_general_path(home: dict[str, Any]) -> None:
    cache = Path(home["env"]["PITOOLS_CACHE_DIR"])
    main = cache / f"index-v{fast_search.SCHEMA_VERSION}.sqlite"
    lock = cache / f"index-v{fast_search.SCHEMA_VERSION}.lock"
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert _warm(["narwhal"]) is None
    finally:
        os.close(fd)
    assert _warm(["narwhal"]) is not None
    conn = sqlite3.connect(main)
    conn.execute("INSERT INTO meta(key, value) VALUES('pending', '1')")
    conn.commit()
    conn.close()
    assert _warm(["narwhal"]) is None
    conn = sqlite3.connect(main)
    conn.execute("DELETE FROM meta WHERE key='pending'")
    conn.execute("PRAGMA user_version=5")
    conn.commit()
    conn.close()
    assert _warm(["narwhal"]) is None


def test_no_index_or_an_index_inside_pi_folders_goes_to_the_general_path(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PITOOLS_CACHE_DIR", str(home["tmp"] / "elsewhere"))
    assert _warm(["narwhal"]) is None
    assert not (home["tmp"] / "elsewhere").exists()  # nothing was created
    monkeypatch.setenv("PITOOLS_CACHE_DIR", str(home["agent"] / "cache"))
    assert _warm(["narwhal"]) is None


def _settings(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_session_folders_equal_archive_scope(home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    agent: Path = home["agent"]
    tmp: Path = home["tmp"]
    sessions = agent / "sessions"
    (sessions / "a-file").write_text("x")
    os.symlink(sessions / "--work-app--", sessions / "--link--")
    os.symlink(tmp / "missing", sessions / "--dangling--")

    def same() -> None:
        ours = fast_search.session_folders(os.environ)
        assert ours is not None
        assert ours == archive_scope().folders

    same()
    _settings(agent / "settings.json", '{"theme": "dark", // a comment\n}')
    _settings(tmp / ".pi" / "settings.json", '{"defaultModel": "x"}')
    same()
    monkeypatch.chdir(agent)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "./")
    same()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "../agent/./")
    same()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp / "nowhere"))
    assert fast_search.session_folders(os.environ) == archive_scope().folders == []
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp / "h"))
    (tmp / "h" / ".pi" / "agent" / "sessions" / "--x--").mkdir(parents=True)
    same()


@pytest.mark.parametrize(
    "where, text",
    [
        ("global", '{"sessionDir": "/elsewhere"}'),
        ("global", '{"session\\u0044ir": "/elsewhere"}'),
        ("project", '{"sessionDir": "sessions"}'),
        ("env", ""),
        ("tilde", ""),
        ("url", ""),
    ],
)
def test_a_configured_session_dir_goes_to_the_general_path(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch, where: str, text: str
) -> None:
    if where == "global":
        _settings(home["agent"] / "settings.json", text)
    elif where == "project":
        _settings(home["tmp"] / ".pi" / "settings.json", text)
    elif where == "env":
        monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(home["agent"] / "sessions" / "--work-app--"))
    elif where == "tilde":
        monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/agent")
    else:
        monkeypatch.setenv("PI_CODING_AGENT_DIR", "file://" + str(home["agent"]))
    assert fast_search.session_folders(os.environ) is None
    assert _warm(["narwhal"]) is None


def test_inside_pi_folders_equals_the_index_module(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "sub").mkdir(parents=True)
    os.symlink(agent, tmp_path / "alias")
    for folder in (agent, agent / "sub", tmp_path / "alias" / "sub", tmp_path / "agent2", tmp_path):
        for env in ({"PI_CODING_AGENT_DIR": str(agent)}, {"HOME": str(tmp_path / "x")}):
            assert fast_search._inside(str(folder), env) == inside_pi_folders(str(folder), env)


def test_the_command_answers_the_same_through_both_paths(home: dict[str, Any]) -> None:
    """End to end: the console entry point (lean path) and click print the same bytes."""
    env = dict(home["env"], TZ="UTC", PITOOLS_WIDTH="120")
    click = "import sys; from pitools.cli import main; sys.exit(main(sys.argv[1:], fast=False))"
    for args in (
        ["search", "narwhal", "--format", "json"],
        ["search", "narwhal"],
        ["search", "kelvin", "--limit", "1"],
    ):
        lean = subprocess.run([sys.executable, "-m", "pitools", *args], env=env, cwd=ROOT, capture_output=True)
        slow = subprocess.run([sys.executable, "-c", click, *args], env=env, cwd=ROOT, capture_output=True)
        assert (lean.returncode, lean.stdout, lean.stderr) == (slow.returncode, slow.stdout, slow.stderr)
        assert lean.returncode == 0 and b"narwhal" in lean.stdout.lower()


def test_a_corrupt_index_is_rebuilt_by_the_general_path_even_with_debug(
    home: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    main = Path(home["env"]["PITOOLS_CACHE_DIR"]) / f"index-v{fast_search.SCHEMA_VERSION}.sqlite"
    for name in os.listdir(main.parent):
        if name.startswith(main.name + "-"):  # -wal, -shm
            os.unlink(main.parent / name)
    main.write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("PITOOLS_DEBUG", "1")
    assert fast_search.run_search(["narwhal", "--format", "json"], Environment()) is None
    env = dict(home["env"], PITOOLS_DEBUG="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pitools", "search", "narwhal", "--format", "json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
    )
    assert proc.returncode == 0 and b"rebuilding" in proc.stderr and b'"count":' in proc.stdout


def test_plain_tool_arguments_need_no_orjson(home: dict[str, Any]) -> None:
    from tests.cli.test_fast_path_cli import _loaded_modules

    loaded = _loaded_modules(home["env"], ["search", "walrus", "--format", "json"])
    assert "pitools.cli.fast_search" in loaded and "pitools.core.views.search_text" in loaded
    assert "orjson" not in loaded and "pitools.ops.search" not in loaded
