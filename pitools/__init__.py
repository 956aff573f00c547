"""pitools: inspect, validate, replay and compact Pi coding-agent session files offline.

The Python API mirrors the commands; names are imported lazily so ``import pitools`` (and the
``pitools`` command's start-up) stays cheap::

    import pitools
    loaded = pitools.load("session.jsonl")
    replay = pitools.replay_context(loaded.index, loaded.leaf(None))
    report = pitools.validate_file("session.jsonl")
    planning = pitools.plan_compact("session.jsonl", for_apply=True)
    done = pitools.apply_compaction(planning, pitools.SummarizeRequest(model_arg="builtin", output="out.jsonl"))
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.4.0"

#: The Pi release whose behaviour pitools reproduces.
PI_REFERENCE_VERSION = "1.6.0"

_LAZY = {
    "load": "pitools.core.session.load",
    "Loaded": "pitools.core.session.load",
    "LoadedSession": "pitools.core.session.load",
    "Session": "pitools.core.session.load",
    "migrate_values": "pitools.core.session.migrate",
    "SessionIndex": "pitools.core.session.tree",
    "replay_context": "pitools.core.context.build",
    "build_projection": "pitools.core.context.build",
    "estimate_tokens": "pitools.core.context.tokens",
    "prepare_compaction": "pitools.core.compaction.prepare",
    "CompactionSettings": "pitools.core.compaction.prepare",
    "plan_compaction": "pitools.core.compaction.plan",
    "plan_compact": "pitools.ops.compaction",
    "apply_compaction": "pitools.ops.compaction",
    "SummarizeRequest": "pitools.ops.summarizing",
    "validate_file": "pitools.core.validate",
    "resolve_settings": "pitools.core.compaction.settings",
    "PitoolsError": "pitools.errors",
}

__all__ = ["PI_REFERENCE_VERSION", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pitools' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
