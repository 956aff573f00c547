"""Pi's project trust rule: whether a project's ``.pi/settings.json`` may be applied.

Pi 1.6.0 (``core/trust-manager.js``, ``core/project-trust.js``, ``resolveProjectTrusted`` in
``main.js``): ``--approve``/``--no-approve`` decide; else the nearest entry at or above the
project folder in the agent dir's ``trust.json`` (``true``/``false``; ``null`` means no
decision); else the global ``defaultProjectTrust`` setting (``"always"``/``"never"``); else
interactive Pi asks and every other mode treats the project as untrusted. Extensions' trust
handlers are out of reach offline (pitools runs none).

pitools applies this rule to every project setting it reads, including ``sessionDir``, which
Pi's start-up reads without a trust check: a repository must not decide where pitools writes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pitools.errors import ConfigError
from pitools.piconfig.jsonc import parse_json, read_text


@dataclass(frozen=True, slots=True)
class TrustDecision:
    trusted: bool
    #: Where the decision came from (a flag, trust.json, defaultProjectTrust) or why there is none.
    source: str
    #: No decision is recorded: interactive Pi would ask; pitools treats the project as untrusted.
    asked: bool = False


ASK = "no trust decision recorded (interactive Pi would ask; untrusted without an answer)"


def trust_store_decision(store: Path, cwd: str, files_read: list[Path]) -> tuple[bool, str] | None:
    """``ProjectTrustStore.get``: the nearest ``trust.json`` entry at or above ``cwd``."""
    text = read_text(store)
    if text is None:
        return None
    files_read.append(store)
    try:
        data = parse_json(text.removeprefix("\ufeff"), store)
    except ConfigError as exc:
        raise ConfigError(f"Failed to read trust store: {exc.message}", path=str(store), line=exc.line) from None
    if not isinstance(data, dict):
        raise ConfigError("Invalid trust store: expected an object", path=str(store))
    for key, value in data.items():
        if value is not True and value is not False and value is not None:
            shown = json.dumps(key, ensure_ascii=False)
            raise ConfigError(f"Invalid trust store: value for {shown} must be true, false, or null", path=str(store))
    resolved = {key: os.path.abspath(key) for key in data}
    current = os.path.realpath(cwd)
    while True:
        for key, value in data.items():
            if resolved[key] == current and isinstance(value, bool):
                return value, f"trust.json: {store} ({key})"
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def project_trust(
    cwd: str,
    agent: Path,
    global_settings: dict[str, Any],
    override: bool | None = None,
    files_read: list[Path] | None = None,
) -> TrustDecision:
    """``resolveProjectTrusted`` for the project at ``cwd``."""
    files_read = [] if files_read is None else files_read
    if override is not None:
        return TrustDecision(override, "flag --approve" if override else "flag --no-approve")
    # Pi would first ask the project_trust handlers of loaded extensions; pitools runs none.
    decision = trust_store_decision(agent / "trust.json", cwd, files_read)
    if decision is not None:
        return TrustDecision(*decision)
    default = global_settings.get("defaultProjectTrust")
    where = f"defaultProjectTrust in agent settings: {agent / 'settings.json'}"
    if default == "always":
        return TrustDecision(True, where)
    if default == "never":
        return TrustDecision(False, where)
    return TrustDecision(False, ASK, asked=True)
