"""Node's ``path.posix`` ``normalize``, ``join`` and ``resolve``: how Pi builds the paths of its
agent folder and sessions. Imports only ``os``, so the lean warm search can use it too."""

from __future__ import annotations

import os

__all__ = ["js_join", "js_normalize", "js_resolve"]


def js_normalize(path: str) -> str:
    """Node's ``path.posix.normalize``: ``.``/``..`` folded, one ``/`` kept, trailing ``/`` kept."""
    if not path:
        return "."
    absolute = path.startswith("/")
    trailing = path.endswith("/")
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not absolute:
                out.append("..")
            continue
        out.append(part)
    text = "/".join(out)
    if not text and not absolute:
        text = "."
    if text and trailing:
        text += "/"
    return ("/" + text) if absolute else text


def js_join(*parts: str) -> str:
    """Node's ``path.posix.join``: the non-empty parts joined with ``/``, then normalised."""
    joined = "/".join(p for p in parts if p)
    return js_normalize(joined) if joined else "."


def js_resolve(path: str, base: str) -> str:
    """Node's ``path.posix.resolve(base, path)`` with ``base`` itself resolved against the cwd."""
    if not path.startswith("/"):
        path = (base if base.startswith("/") else os.path.join(os.getcwd(), base)) + "/" + path
    out = js_normalize(path)
    return out[:-1] if len(out) > 1 and out.endswith("/") else out
