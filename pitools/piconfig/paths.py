"""Pi's agent directory and the paths under it, computed once for every part of pitools.

Pi's rules (reference ``dist/config.js`` and ``dist/utils/paths.js``):

* ``getAgentDir()``: a non-empty ``PI_CODING_AGENT_DIR`` goes through ``expandTildePath``
  (= ``normalizePath``: ``~`` and ``~/…`` against ``os.homedir()``, ``file://`` URLs through
  ``fileURLToPath``) and is used as is, relative or with a trailing slash; otherwise
  ``join(homedir(), ".pi", "agent")``.
* ``os.homedir()`` is ``$HOME`` whenever it is set, even empty, else the passwd entry.
* ``models.json``, ``auth.json``, ``settings.json`` and ``sessions`` are ``join(agentDir, name)``.
* ``resolvePath(input, base)``: ``normalizePath``, then ``path.resolve`` (absolute, normalised,
  symlinks kept).

Every function takes the environment as a mapping so tests (and callers) never depend on the
process environment; the node comparison lives in ``tests/unit/piconfig``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote

from pitools.errors import ConfigError
from pitools.nodepath import js_join, js_resolve

CONFIG_DIR_NAME = ".pi"
ENV_AGENT_DIR = "PI_CODING_AGENT_DIR"
ENV_SESSION_DIR = "PI_CODING_AGENT_SESSION_DIR"


def home_dir(env: Mapping[str, str]) -> str:
    """Node's ``os.homedir()``: ``$HOME`` whenever it is set (even empty), else the passwd entry."""
    if "HOME" in env:
        return env["HOME"]
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError):  # pragma: no cover - non-POSIX
        return os.path.expanduser("~")


_URL_STRIP = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$")


def file_url_to_path(url: str) -> str:
    """Node's ``url.fileURLToPath`` on POSIX, for the URLs a user can put in a variable."""
    text = _URL_STRIP.sub("", url).replace("\t", "").replace("\n", "").replace("\r", "").replace("\\", "/")
    body = text[len("file:") :]
    rest = "/" + body.lstrip("/")
    if body.startswith("//"):
        host, _, after = body[2:].partition("/")
        rest = "/" + after
        if host.lower() not in ("", "localhost"):
            raise ConfigError(f'File URL host must be "localhost" or empty on linux: {url}')
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    if not rest.startswith("/"):
        rest = "/" + rest
    if re.search(r"%2f", rest, re.IGNORECASE):
        raise ConfigError(f"File URL path must not include encoded / characters: {url}")
    # The URL parser folds "." and ".." segments (never above the root).
    segments: list[str] = []
    parts = rest.split("/")[1:]
    for i, seg in enumerate(parts):
        low = seg.lower()
        last = i == len(parts) - 1
        if low in (".", "%2e"):
            if last:
                segments.append("")
            continue
        if low in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
            if last:
                segments.append("")
            continue
        segments.append(seg)
    return unquote("/" + "/".join(segments), errors="surrogateescape")


def normalize_path(text: str, env: Mapping[str, str]) -> str:
    """Pi's ``normalizePath`` (default options): ``~``/``~/…`` expanded, ``file://`` URLs as paths."""
    if text == "~":
        return home_dir(env)
    if text.startswith("~/"):
        return js_join(home_dir(env), text[2:])
    if text.startswith("file://"):
        return file_url_to_path(text)
    return text


def resolve_path(text: str, base: str, env: Mapping[str, str]) -> str:
    """Pi's ``resolvePath(text, base)``: normalise both, then ``path.resolve`` (symlinks kept)."""
    return js_resolve(normalize_path(text, env), normalize_path(base, env))


def paths_equal(a: str, b: str) -> bool:
    """Pi's ``pathsEqual`` on POSIX: equal after ``path.resolve``."""
    here = os.getcwd()
    return js_resolve(a, here) == js_resolve(b, here)


def agent_dir(env: Mapping[str, str] | None = None) -> str:
    """Pi's ``getAgentDir()``: ``PI_CODING_AGENT_DIR`` through ``normalizePath``, else ``~/.pi/agent``.

    The result is Pi's string, which may be relative (to the process's working directory).
    """
    env = os.environ if env is None else env
    configured = env.get(ENV_AGENT_DIR)
    if configured:
        return normalize_path(configured, env)
    return js_join(home_dir(env), CONFIG_DIR_NAME, "agent")


def agent_dir_resolved(env: Mapping[str, str] | None = None) -> str:
    """The agent directory as an absolute path (``resolvePath(getAgentDir())``)."""
    return js_resolve(agent_dir(env), os.getcwd())


def agent_folder(env: Mapping[str, str] | None = None) -> Path:
    """The agent directory as an absolute :class:`~pathlib.Path`: what every reader of its files uses."""
    return Path(agent_dir_resolved(env))


def agent_file(name: str, env: Mapping[str, str] | None = None) -> str:
    """``join(getAgentDir(), name)``: ``models.json``, ``auth.json``, ``settings.json``, ``trust.json``…"""
    return js_join(agent_dir(env), name)


def models_path(env: Mapping[str, str] | None = None) -> str:
    """Pi's ``getModelsPath()``."""
    return agent_file("models.json", env)


def auth_path(env: Mapping[str, str] | None = None) -> str:
    """Pi's ``getAuthPath()``."""
    return agent_file("auth.json", env)


def settings_path(env: Mapping[str, str] | None = None) -> str:
    """Pi's ``getSettingsPath()``."""
    return agent_file("settings.json", env)


def sessions_dir(env: Mapping[str, str] | None = None) -> str:
    """Pi's ``getSessionsDir()``."""
    return agent_file("sessions", env)


def project_settings_path(cwd: str, env: Mapping[str, str]) -> str:
    """``<cwd>/.pi/settings.json`` with ``cwd`` resolved as Pi's ``SettingsManager`` does."""
    return js_join(resolve_path(cwd, os.getcwd(), env), CONFIG_DIR_NAME, "settings.json")
