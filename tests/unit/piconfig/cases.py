"""The environments and inputs on which pitools' piconfig is compared with Pi's own functions.

``pi_config_answers.json`` holds Pi's answers recorded with ``pi_config.mjs`` (regenerate with
``python -m tests.unit.piconfig.record``); the test also asks node live when it can.
"""

from __future__ import annotations

from typing import Any

HOME = "/home/u"

AGENT_DIR_VALUES: list[str | None] = [
    None,  # unset
    "",  # empty counts as unset
    "~",
    "~/x",
    "~/x/",
    "~x",
    "rel/dir",
    "./rel/../dir",
    "/abs/dir/",
    "/abs//dir",
    "file:///x/y",
    "file:///x/y/",
    "file:///x%20y/z",
    "file://localhost/x/y",
    "file:///x/./y/../z",
    "file://host/x",
    "file:///x%2Fy",
]

PATH_INPUTS = ["~", "~/a", "~/", "a/b", "../a", "/x/../y", "/x/y/", "file:///q/r", "", ".", "~a"]


def cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for value in AGENT_DIR_VALUES:
        out.append({"kind": "agentDir", "env": {"HOME": HOME, "PI_CODING_AGENT_DIR": value}})
    for home in ("", "/home/u/", "relhome"):
        for value in (None, "~", "~/x"):
            out.append({"kind": "agentDir", "env": {"HOME": home, "PI_CODING_AGENT_DIR": value}})
    for text in PATH_INPUTS:
        out.append({"kind": "normalizePath", "env": {"HOME": HOME}, "input": text})
        out.append({"kind": "resolvePath", "env": {"HOME": HOME}, "input": text, "base": "/base/dir"})
    out.append({"kind": "normalizePath", "env": {"HOME": ""}, "input": "~/a"})
    out.append({"kind": "resolvePath", "env": {"HOME": HOME}, "input": "x", "base": "~/proj"})
    return out
