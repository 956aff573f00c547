"""Find session files where Pi 1.6.0 keeps them, and resolve a user's session reference.

Pi's rules, read from the reference package (``dist/``):

* Session directory (``main.js``, ``main()``): ``--session-dir``, else ``PI_CODING_AGENT_SESSION_DIR``,
  else the ``sessionDir`` setting (``SettingsManager.getSessionDir``: the agent ``settings.json``
  deep-merged with ``<cwd>/.pi/settings.json``, project winning; the startup settings manager
  reads the project file without a trust check). Each value gets ``normalizePath`` (``~``, ``~/``
  and ``file://`` URLs); an empty value counts as unset.
* Without one, ``getDefaultSessionDirPath`` (``session-manager.js``):
  ``<agent dir>/sessions/--<cwd, leading / or \\ dropped, / \\ : turned into ->--``, where the
  agent dir is ``PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent`` (``config.js``,
  ``getAgentDir``) and both paths are resolved (``resolvePath``: absolute, normalised, no symlink
  resolution).
* ``--continue`` (``SessionManager.continueRecent`` → ``findMostRecentSession``): ``*.jsonl`` in
  that directory, newest ``mtime`` first (ties keep ``readdir`` order, which libuv sorts by byte
  value), the first whose header is a valid session header. The header's ``cwd`` must match the
  current directory only when a session directory was configured *and* differs from the default
  one for this cwd (``filterCwd``).
* ``--session <arg>`` (``main.js``, ``resolveSessionPath``): an argument containing ``/`` or
  ``\\`` or ending in ``.jsonl`` is a path; otherwise an exact id in the local directory
  (``SessionManager.findById``), then an id prefix among the local sessions
  (``SessionManager.list``), then an exact id, then a prefix, among all sessions
  (``SessionManager.listAll``: every directory under ``<agent dir>/sessions``, or only the
  configured directory).
* Header discovery (``readSessionHeader``): the first line that parses to a truthy JSON value
  must be ``{"type": "session", "id": <string>}``; blank and malformed lines before it are
  skipped; at most 1 MiB is scanned, and a file that cannot be read is not a session.

Where pitools differs, on purpose: an id prefix that matches several sessions is an error (Pi
silently takes the most recently active one); a bare name that matches no session id but names an
existing file is read as that file; nothing is ever created (Pi makes the default directory).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitools import piconfig
from pitools.core.session.header import read_session_header
from pitools.core.session.refs import looks_like_path
from pitools.errors import ConfigError, PitoolsError

ENV_AGENT_DIR = piconfig.ENV_AGENT_DIR
ENV_SESSION_DIR = piconfig.ENV_SESSION_DIR
CONFIG_DIR_NAME = piconfig.CONFIG_DIR_NAME

SOURCE_OPTION = "--session-dir"
SOURCE_ENV = ENV_SESSION_DIR
SOURCE_SETTINGS = "sessionDir setting"
SOURCE_DEFAULT = "default"


# -- paths: Pi's rules live in pitools.piconfig ------------------------------------------------

home_dir = piconfig.home_dir
normalize_path = piconfig.normalize_path
resolve_path = piconfig.resolve_path
paths_equal = piconfig.paths_equal
agent_dir = piconfig.agent_dir
#: Pi's ``getSessionsDir``: ``<agent dir>/sessions``.
sessions_root = piconfig.sessions_dir


def encode_cwd(resolved_cwd: str) -> str:
    """The folder name Pi gives a cwd: ``--home-me-proj--`` for ``/home/me/proj``."""
    trimmed = re.sub(r"^[/\\]", "", resolved_cwd)
    return "--" + re.sub(r"[/\\:]", "-", trimmed) + "--"


def default_session_dir(cwd: str, env: Mapping[str, str]) -> str:
    """Pi's ``getDefaultSessionDirPath(cwd)`` (without creating it)."""
    here = os.getcwd()
    resolved_cwd = resolve_path(cwd, here, env)
    resolved_agent = resolve_path(agent_dir(env), here, env)
    return os.path.join(resolved_agent, "sessions", encode_cwd(resolved_cwd))


# -- settings -----------------------------------------------------------------------------------


def setting_session_dir(cwd: str, env: Mapping[str, str]) -> tuple[Any, str | None, str | None]:
    """The merged ``sessionDir`` setting, the file it came from, and a note when a project's
    setting was ignored because the project is not trusted (Pi's trust rule, see piconfig.trust).

    The settings files come from the run's :class:`~pitools.piconfig.resolver.PiConfig` (Pi's
    policy: an unreadable or invalid file counts as empty)."""
    from pitools.piconfig.resolver import load_pi_config, read_settings_file

    config = load_pi_config(env)
    global_settings = config.settings.data
    value: Any = global_settings.get("sessionDir")
    source: str | None = str(config.settings.path) if "sessionDir" in global_settings else None
    ignored: str | None = None
    project_file = piconfig.project_settings_path(cwd, env)
    if "sessionDir" in read_settings_file(Path(project_file)).data:
        try:
            project = config.project_settings(cwd, env)
            why = "" if project is None else project.trust.source
        except ConfigError as exc:  # an unreadable trust.json: no trust
            project, why = None, exc.message
        if project is not None and project.applied:
            # deepMergeObjects: a project value replaces the global one (JSON has no undefined).
            value, source = project.file.data["sessionDir"], project_file
        else:
            ignored = f"sessionDir in {project_file} ignored: the project is not trusted ({why})"
    return value, source, ignored


@dataclass(frozen=True, slots=True)
class SessionDirChoice:
    """Where sessions live for a cwd, and why."""

    #: The configured directory (absolute), or None when Pi uses the per-cwd default.
    configured: str | None
    source: str
    #: The per-cwd default directory (``getDefaultSessionDirPath``).
    default: str
    settings_file: str | None = None
    #: Why a project's sessionDir setting was not used (an untrusted project), if one was ignored.
    ignored_setting: str | None = None

    @property
    def directory(self) -> str:
        return self.configured or self.default

    @property
    def filter_cwd(self) -> bool:
        """Pi's ``filterCwd``: check header cwds only in a configured, non-default directory."""
        return self.configured is not None and not paths_equal(self.configured, self.default)


def choose_session_dir(
    *, cwd: str | None = None, env: Mapping[str, str] | None = None, session_dir: str | None = None
) -> SessionDirChoice:
    """Pi's session-directory precedence: ``--session-dir``, env, ``sessionDir`` setting, default."""
    env = os.environ if env is None else env
    cwd = cwd or os.getcwd()
    here = os.getcwd()
    default = default_session_dir(cwd, env)
    if session_dir:
        return SessionDirChoice(resolve_path(session_dir, here, env), SOURCE_OPTION, default)
    from_env = env.get(ENV_SESSION_DIR)
    if from_env:
        return SessionDirChoice(resolve_path(from_env, here, env), SOURCE_ENV, default)
    value, settings_file, ignored = setting_session_dir(cwd, env)
    if value:
        if not isinstance(value, str):
            # Pi's normalizePath calls string methods on it and crashes at startup.
            raise ConfigError(f"sessionDir must be a string, not {type(value).__name__}", path=settings_file)
        # "Relative paths resolve from the working directory" (docs/settings.md).
        base = resolve_path(cwd, here, env)
        return SessionDirChoice(resolve_path(value, base, env), SOURCE_SETTINGS, default, settings_file, ignored)
    return SessionDirChoice(None, SOURCE_DEFAULT, default, ignored_setting=ignored)


def header_cwd_matches(header: Mapping[str, Any], resolved_cwd: str, env: Mapping[str, str]) -> bool:
    """Pi's ``sessionCwdMatches``: a non-empty string cwd that resolves to ``resolved_cwd``."""
    cwd = header.get("cwd")
    if type(cwd) is not str or cwd == "":
        return False
    return paths_equal(resolve_path(cwd, os.getcwd(), env), resolved_cwd)


# -- directory scans ----------------------------------------------------------------------------


def session_files(directory: str) -> list[str]:
    """``*.jsonl`` names in ``directory`` in libuv's ``readdir`` order (byte order), as full paths."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    names = [n for n in names if n.endswith(".jsonl") and _is_regular(os.path.join(directory, n))]
    names.sort(key=lambda n: n.encode("utf-8", "surrogateescape"))
    return [os.path.join(directory, n) for n in names]


def _is_regular(path: str) -> bool:
    """A regular file (symlinks followed); FIFOs, sockets and devices are skipped, as ``validate DIR`` does."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # let the reader report it (or, like Pi, skip it)


def mtime_ms(st: os.stat_result) -> float:
    """Node's ``stats.mtimeMs`` (a double of milliseconds)."""
    return st.st_mtime_ns // 1_000_000_000 * 1000 + (st.st_mtime_ns % 1_000_000_000) / 1e6


def find_most_recent_session(directory: str, cwd: str | None, env: Mapping[str, str]) -> str | None:
    """Pi's ``findMostRecentSession(sessionDir, cwd)``."""
    resolved_cwd = resolve_path(cwd, os.getcwd(), env) if cwd else None
    files = session_files(directory)
    stamped: list[tuple[str, float]] = []
    for path in files:
        try:
            stamped.append((path, mtime_ms(os.stat(path))))
        except OSError:
            # Pi's statSync throws inside its try: recent-session discovery finds nothing.
            return None
    stamped.sort(key=lambda item: -item[1])  # stable: ties keep readdir order
    for path, _ in stamped:
        header = read_session_header(path)
        if header is None:
            continue
        if resolved_cwd is None or header_cwd_matches(header, resolved_cwd, env):
            return path
    return None


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    id: str
    cwd: Any


def _headers_in(directory: str) -> Iterator[Candidate]:
    for path in session_files(directory):
        header = read_session_header(path)
        if header is not None:
            yield Candidate(path, header["id"], header.get("cwd"))


def all_session_dirs(env: Mapping[str, str]) -> list[str]:
    """Pi's ``listAll`` scope without a configured directory: every folder under ``sessions/``."""
    root = sessions_root(env)
    out: list[str] = []
    try:
        with os.scandir(root) as it:
            for entry in it:
                try:
                    if entry.is_dir() or entry.is_symlink():
                        out.append(entry.path)
                except OSError:
                    continue
    except OSError:
        return []
    out.sort(key=lambda p: os.path.basename(p).encode("utf-8", "surrogateescape"))
    return out


# -- references ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LocatedSession:
    """A resolved session reference and how it was found."""

    path: Path
    #: "path", "recent", "id", "prefix", "global-id", "global-prefix" or "file".
    how: str
    choice: SessionDirChoice | None = None
    candidates: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        """One line for stderr saying which file was chosen and why."""
        if self.how == "recent" and self.choice is not None:
            return f"using the most recent session in {self.choice.directory}: {self.path}"
        if self.how in ("id", "prefix", "global-id", "global-prefix"):
            scope = "this directory's sessions" if not self.how.startswith("global") else "all sessions"
            kind = "id" if self.how.endswith("id") else "id prefix"
            return f"using session {self.path} (matched by {kind} among {scope})"
        return f"using {self.path}"


def locate_session(
    ref: str | None,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> LocatedSession:
    """Resolve ``ref`` (a path, a session id or id prefix, or None for the most recent session)."""
    env = os.environ if env is None else env
    cwd = cwd or os.getcwd()
    if ref is not None and looks_like_path(ref):
        return LocatedSession(Path(ref), "path")
    choice = choose_session_dir(cwd=cwd, env=env, session_dir=session_dir)
    if ref is None:
        found = find_most_recent_session(choice.directory, cwd if choice.filter_cwd else None, env)
        if found is None:
            raise PitoolsError(
                f"no Pi session found for {resolve_path(cwd, os.getcwd(), env)} in {choice.directory} "
                f"({_describe_source(choice)}); pass a session file or id, or see `pitools ls --all`"
            )
        return LocatedSession(Path(found), "recent", choice)
    if ref == "":
        raise PitoolsError("empty session reference")
    resolved_cwd = resolve_path(cwd, os.getcwd(), env)
    local = [
        c
        for c in _headers_in(choice.directory)
        if not choice.filter_cwd or header_cwd_matches({"cwd": c.cwd}, resolved_cwd, env)
    ]
    hit = _match(ref, local, "", choice)
    if hit is not None:
        return hit
    dirs = [choice.configured] if choice.configured else all_session_dirs(env)
    everywhere = [c for d in dirs for c in _headers_in(d)]
    hit = _match(ref, everywhere, "global-", choice)
    if hit is not None:
        return hit
    if os.path.isfile(ref):
        return LocatedSession(Path(ref), "file", choice)
    where = choice.configured or f"{choice.default} or anywhere under {sessions_root(env)}"
    raise PitoolsError(f"no session file, session id or id prefix matches {ref!r} (looked in {where})")


def _match(ref: str, candidates: list[Candidate], scope: str, choice: SessionDirChoice) -> LocatedSession | None:
    for c in candidates:
        if c.id == ref:
            # Pi's findById: the first file in readdir order with exactly this id.
            return LocatedSession(Path(c.path), scope + "id", choice)
    prefixed = [c for c in candidates if c.id.startswith(ref)]
    paths = list(dict.fromkeys(c.path for c in prefixed))
    if len(paths) == 1:
        return LocatedSession(Path(paths[0]), scope + "prefix", choice)
    if len(paths) > 1:
        # Pi takes the most recently active match; pitools asks for a longer prefix.
        raise _ambiguous(ref, prefixed)
    return None


def _ambiguous(ref: str, candidates: list[Candidate]) -> PitoolsError:
    shown = "; ".join(f"{c.id} ({c.path})" for c in candidates[:5])
    more = f"; … {len(candidates) - 5} more" if len(candidates) > 5 else ""
    return PitoolsError(f"session reference {ref!r} is ambiguous: {shown}{more}")


def _describe_source(choice: SessionDirChoice) -> str:
    if choice.source == SOURCE_SETTINGS:
        return f"sessionDir from {choice.settings_file}"
    if choice.source == SOURCE_DEFAULT:
        return "Pi's default for this directory"
    return f"from {choice.source}"
