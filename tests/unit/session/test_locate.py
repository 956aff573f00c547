"""Finding sessions like Pi 1.6.0 (config.js getAgentDir, session-manager.js, main.js resolveSessionPath)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pitools.core.session import header as session_header
from pitools.core.session import locate
from pitools.errors import ConfigError, PitoolsError
from tests import support

GOLDEN = support.GOLDEN


@pytest.fixture
def pi_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A private agent dir and home, and a working directory of our own."""
    home = tmp_path / "home"
    agent = tmp_path / "agent"
    work = tmp_path / "work" / "proj"
    for d in (home, agent, work):
        d.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.delenv(locate.ENV_SESSION_DIR, raising=False)
    env = {"HOME": str(home), locate.ENV_AGENT_DIR: str(agent)}
    return env


def put_session(folder: Path, sid: str, cwd: str, *, mtime: float, source: str = "seed-running-example") -> Path:
    """A copy of a golden session with its header's id and cwd replaced, in Pi's file layout."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = (GOLDEN / source / "session.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header.update(id=sid, cwd=cwd)
    path = folder / f"2026-01-01T00-00-{int(mtime) % 60:02d}-000Z_{sid}.jsonl"
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


# -- directories ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "name"),
    [
        ("/home/me/proj", "--home-me-proj--"),
        ("/", "----"),
        ("/a:b/c d", "--a-b-c d--"),
        ("C:\\Users\\me", "--C--Users-me--"),
    ],
)
def test_encode_cwd(cwd: str, name: str) -> None:
    assert locate.encode_cwd(cwd) == name


def test_default_session_dir_uses_the_agent_dir(pi_env: dict[str, str], tmp_path: Path) -> None:
    expected = tmp_path / "agent" / "sessions" / locate.encode_cwd(str(tmp_path / "work" / "proj"))
    assert locate.default_session_dir(os.getcwd(), pi_env) == str(expected)
    # A relative cwd resolves against the current directory, "." and ".." included.
    assert locate.default_session_dir("../proj/.", pi_env) == str(expected)


def test_agent_dir_default_and_tilde(pi_env: dict[str, str]) -> None:
    home = pi_env["HOME"]
    assert locate.agent_dir({"HOME": home}) == os.path.join(home, ".pi", "agent")
    assert locate.agent_dir({"HOME": home, locate.ENV_AGENT_DIR: "~/alt"}) == os.path.join(home, "alt")
    assert locate.agent_dir({"HOME": home, locate.ENV_AGENT_DIR: ""}) == os.path.join(home, ".pi", "agent")
    assert locate.normalize_path("file:///tmp/a%20b", {}) == "/tmp/a b"


def _write_settings(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_session_dir_precedence(pi_env: dict[str, str], tmp_path: Path) -> None:
    cwd = os.getcwd()
    default = locate.default_session_dir(cwd, pi_env)
    choice = locate.choose_session_dir(env=pi_env)
    assert (choice.configured, choice.source, choice.directory) == (None, "default", default)
    _write_settings(tmp_path / "agent" / "settings.json", {"sessionDir": "~/from-global"})
    choice = locate.choose_session_dir(env=pi_env)
    assert choice.configured == os.path.join(pi_env["HOME"], "from-global")
    assert choice.source == "sessionDir setting"
    # The project file counts only when the project is trusted (pitools applies Pi's trust rule to
    # sessionDir too, where Pi's start-up does not): untrusted, it is ignored and the note says why.
    _write_settings(Path(cwd) / ".pi" / "settings.json", {"sessionDir": "local-sessions"})
    choice = locate.choose_session_dir(env=pi_env)
    assert choice.configured == os.path.join(pi_env["HOME"], "from-global")
    assert choice.ignored_setting is not None and "not trusted" in choice.ignored_setting
    # Trusted (trust.json), it wins; relative means from the cwd.
    _write_settings(tmp_path / "agent" / "trust.json", {cwd: True})
    assert locate.choose_session_dir(env=pi_env).configured == os.path.join(cwd, "local-sessions")
    env = dict(pi_env, **{locate.ENV_SESSION_DIR: str(tmp_path / "from-env")})
    assert locate.choose_session_dir(env=env).configured == str(tmp_path / "from-env")
    assert locate.choose_session_dir(env=dict(pi_env, **{locate.ENV_SESSION_DIR: ""})).source == "sessionDir setting"
    choice = locate.choose_session_dir(env=env, session_dir=str(tmp_path / "flag"))
    assert (choice.configured, choice.source) == (str(tmp_path / "flag"), "--session-dir")


def test_settings_edge_cases(pi_env: dict[str, str], tmp_path: Path) -> None:
    settings = tmp_path / "agent" / "settings.json"
    settings.write_text("\ufeff" + json.dumps({"sessionDir": "/abs/dir"}), encoding="utf-8")
    assert locate.choose_session_dir(env=pi_env).configured == "/abs/dir"
    settings.write_text("{not json", encoding="utf-8")  # Pi reports it and carries on with {}
    assert locate.choose_session_dir(env=pi_env).source == "default"
    _write_settings(settings, {"sessionDir": ""})
    assert locate.choose_session_dir(env=pi_env).source == "default"
    _write_settings(settings, {"sessionDir": 42})
    with pytest.raises(ConfigError, match="sessionDir must be a string"):
        locate.choose_session_dir(env=pi_env)


def test_filter_cwd_only_in_a_configured_non_default_dir(pi_env: dict[str, str], tmp_path: Path) -> None:
    assert not locate.choose_session_dir(env=pi_env).filter_cwd
    default = locate.default_session_dir(os.getcwd(), pi_env)
    assert not locate.choose_session_dir(env=pi_env, session_dir=default).filter_cwd
    assert locate.choose_session_dir(env=pi_env, session_dir=str(tmp_path / "shared")).filter_cwd


# -- headers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected_id"),
    [
        ('{"type":"session","id":"s1"}\n{"type":"message"}\n', "s1"),
        ('\n  \nnot json\n0\nnull\n{"type":"session","id":"s2"}\n', "s2"),
        ('{"type":"session","id":"s3"}', "s3"),
        ('{"type":"message","id":"m"}\n{"type":"session","id":"s"}\n', None),
        ('{"type":"session","id":7}\n', None),
        ("[1]\n", None),
        ("", None),
        ('\ufeff{"type":"session","id":"bom"}\n', None),
    ],
)
def test_read_session_header(tmp_path: Path, text: str, expected_id: str | None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    header = session_header.read_session_header(path)
    assert (header or {}).get("id") == expected_id


def test_header_scan_stops_after_one_mebibyte(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x" * (session_header.HEADER_SCAN_LIMIT + 10) + b'\n{"type":"session","id":"late"}\n')
    assert session_header.read_session_header(path) is None
    path.write_bytes(b"x" * 1000 + b'\n{"type":"session","id":"early"}\n' + b"y" * session_header.HEADER_SCAN_LIMIT)
    assert session_header.read_session_header(path) == {"type": "session", "id": "early"}


# -- --continue -------------------------------------------------------------------------------


def test_most_recent_session_by_mtime_skipping_non_sessions(pi_env: dict[str, str]) -> None:
    cwd = os.getcwd()
    folder = Path(locate.default_session_dir(cwd, pi_env))
    put_session(folder, "older", cwd, mtime=1_700_000_010)
    newest_valid = put_session(folder, "newer", "/somewhere/else", mtime=1_700_000_020)
    broken = folder / "2026-broken.jsonl"
    broken.write_text('{"type":"message"}\n', encoding="utf-8")
    os.utime(broken, (1_700_000_030, 1_700_000_030))
    (folder / "notes.txt").write_text("not a session")
    # The default folder is not filtered by the header's cwd.
    located = locate.locate_session(None, env=pi_env)
    assert (located.path, located.how) == (newest_valid, "recent")
    assert "most recent session" in located.describe()


def test_most_recent_ties_keep_byte_order(pi_env: dict[str, str]) -> None:
    cwd = os.getcwd()
    folder = Path(locate.default_session_dir(cwd, pi_env))
    b = put_session(folder, "bbb", cwd, mtime=1_700_000_000)
    a = put_session(folder, "aaa", cwd, mtime=1_700_000_000)
    assert sorted([a.name, b.name])[0] == a.name
    assert locate.find_most_recent_session(str(folder), None, pi_env) == str(a)


def test_most_recent_in_shared_dir_checks_the_header_cwd(pi_env: dict[str, str], tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    mine = put_session(shared, "mine", os.getcwd(), mtime=1_700_000_000)
    put_session(shared, "theirs", "/other/project", mtime=1_700_000_100)
    put_session(shared, "nocwd", "", mtime=1_700_000_200)
    assert locate.locate_session(None, env=pi_env, session_dir=str(shared)).path == mine
    env = dict(pi_env, **{locate.ENV_SESSION_DIR: str(shared)})
    assert locate.locate_session(None, env=env).path == mine


def test_no_session_is_a_clear_error(pi_env: dict[str, str]) -> None:
    with pytest.raises(PitoolsError, match=r"no Pi session found for .* in .*-work-proj-- "):
        locate.locate_session(None, env=pi_env)


# -- --session <arg> --------------------------------------------------------------------------


def test_paths_are_taken_as_given(pi_env: dict[str, str]) -> None:
    for ref in ("x.jsonl", "dir/x", "a\\b", "/abs/missing.jsonl"):
        located = locate.locate_session(ref, env=pi_env)
        assert (located.path, located.how) == (Path(ref), "path")


def test_ids_prefixes_and_global_matches(pi_env: dict[str, str], tmp_path: Path) -> None:
    cwd = os.getcwd()
    local = Path(locate.default_session_dir(cwd, pi_env))
    elsewhere = tmp_path / "agent" / "sessions" / "--other--"
    a = put_session(local, "0190aaaa-1111", cwd, mtime=1_700_000_000)
    b = put_session(local, "0190aaab-2222", cwd, mtime=1_700_000_001)
    c = put_session(elsewhere, "0190ccc-3333", "/other", mtime=1_700_000_002)
    d = put_session(elsewhere, "0190aaaa", "/other", mtime=1_700_000_003)
    assert locate.locate_session("0190aaaa-1111", env=pi_env).how == "id"
    assert locate.locate_session("0190aaab", env=pi_env).path == b
    # An exact id in another project still loses to a local prefix match, as in Pi.
    assert locate.locate_session("0190aaaa", env=pi_env).path == a
    located = locate.locate_session("0190ccc", env=pi_env)
    assert (located.path, located.how) == (c, "global-prefix")
    with pytest.raises(PitoolsError, match="ambiguous"):
        locate.locate_session("0190aa", env=pi_env)
    with pytest.raises(PitoolsError, match="no session file, session id or id prefix matches 'zzz'"):
        locate.locate_session("zzz", env=pi_env)
    assert d.exists()


def test_configured_dir_limits_global_search(pi_env: dict[str, str], tmp_path: Path) -> None:
    put_session(tmp_path / "agent" / "sessions" / "--other--", "far-away", "/other", mtime=1_700_000_000)
    shared = tmp_path / "shared"
    near = put_session(shared, "near-by", "/yet/another", mtime=1_700_000_000)
    with pytest.raises(PitoolsError):
        locate.locate_session("far", env=pi_env, session_dir=str(shared))
    # listAll(sessionDir) reads only the configured folder, without a cwd check.
    assert locate.locate_session("near", env=pi_env, session_dir=str(shared)).path == near


def test_bare_name_of_an_existing_file(pi_env: dict[str, str]) -> None:
    Path("mysession").write_text((GOLDEN / "seed-running-example" / "session.jsonl").read_text(encoding="utf-8"))
    located = locate.locate_session("mysession", env=pi_env)
    assert (located.path, located.how) == (Path("mysession"), "file")


def test_api_load_accepts_references(pi_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.core.session.load import load

    for key, value in pi_env.items():
        monkeypatch.setenv(key, value)
    path = put_session(Path(locate.default_session_dir(os.getcwd(), pi_env)), "loadme-42", os.getcwd(), mtime=1e9)
    assert load("loadme").path == str(path)
    assert load().path == str(path)
    assert load(path).path == str(path)
