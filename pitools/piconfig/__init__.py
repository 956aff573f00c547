"""Pi's configuration, read-only: the agent dir, the files under it, JSONC reading, env precedence.

One module so that settings, session discovery and the summarizer read the same folder and
files. It writes nothing and imports nothing of store/summarize/ops/cli/render (the contracts in
pyproject.toml): core may call into it, and so may every layer above core.
"""

from __future__ import annotations

from pitools.nodepath import js_join
from pitools.piconfig.jsonc import load_json_file, parse_json, read_json_object, read_text, strip_json_comments
from pitools.piconfig.paths import (
    CONFIG_DIR_NAME,
    ENV_AGENT_DIR,
    ENV_SESSION_DIR,
    agent_dir,
    agent_dir_resolved,
    agent_file,
    agent_folder,
    auth_path,
    home_dir,
    models_path,
    normalize_path,
    paths_equal,
    project_settings_path,
    resolve_path,
    sessions_dir,
    settings_path,
)

__all__ = [
    "CONFIG_DIR_NAME",
    "ENV_AGENT_DIR",
    "ENV_SESSION_DIR",
    "agent_dir",
    "agent_dir_resolved",
    "agent_file",
    "agent_folder",
    "auth_path",
    "home_dir",
    "js_join",
    "load_json_file",
    "models_path",
    "normalize_path",
    "parse_json",
    "paths_equal",
    "project_settings_path",
    "read_json_object",
    "read_text",
    "resolve_path",
    "sessions_dir",
    "settings_path",
    "strip_json_comments",
]
