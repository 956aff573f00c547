"""The summarizer's view of Pi's configuration files: thin wrappers over :mod:`pitools.piconfig.resolver`.

* ``settings.json``: ``defaultProvider`` / ``defaultModel``;
* ``models.json``: ``providers`` with ``baseUrl``, ``api``, ``apiKey``, ``headers``,
  ``authHeader``, ``compat``, ``models`` and ``modelOverrides`` (JSONC, as Pi reads it);
* ``auth.json``: per-provider credentials; only ``{"type": "api_key", "key", "env"}`` entries
  are usable by pitools, OAuth logins are reported as unsupported.

Pi's error policy applies, as for every other command: a missing file is an empty one, and a
broken file is skipped (Pi warns about settings.json and models.json, and reads no credentials
from an unparseable auth.json); :func:`problems` says why a file was skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pitools import piconfig
from pitools.piconfig.resolver import load_folder

AGENT_DIR_ENV = piconfig.ENV_AGENT_DIR


#: Pi's ``getAgentDir`` (absolute): the same folder settings and session discovery use.
agent_dir = piconfig.agent_folder


def read_settings(directory: Path) -> dict[str, Any]:
    """The global ``settings.json`` (``{}`` when missing or broken, as Pi reads it)."""
    return dict(load_folder(directory).settings.data)


def read_models(directory: Path) -> dict[str, dict[str, Any]]:
    """``models.json``'s ``providers`` (``{}`` when missing, or broken: Pi then ignores the whole file)."""
    return dict(load_folder(directory).models.data)


def read_auth(directory: Path) -> dict[str, dict[str, Any]]:
    """``auth.json``: provider id → credential (Pi reads none from a file it cannot parse)."""
    return dict(load_folder(directory).auth.data)


def problems(directory: Path) -> list[str]:
    """Why Pi skips (part of) the folder's configuration files, for error messages and warnings."""
    return load_folder(directory).warnings
