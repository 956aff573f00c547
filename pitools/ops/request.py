"""``pitools request`` and ``validate --for-model``: the body pi-ai would send a model at a leaf.

The building and the provider rules are core's (:mod:`pitools.core.request`); this module adds
what reads the user's configuration (the agent folder's ``models.json``) and the files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any


def resolve_model(ref: str) -> dict[str, Any]:
    """``--model PROVIDER/ID`` → pi-ai's model object: Pi's catalogue, then the agent folder's models.json."""
    from pitools.core.request.models import resolve_request_model
    from pitools.piconfig.catalog import chat_models
    from pitools.summarize.agent_config import agent_dir, read_models

    providers = read_models(agent_dir(os.environ))
    return resolve_request_model(ref, chat_models(), {"providers": providers})


def build_for(loaded: Any, leaf: Any, ref: str, thinking: str | None) -> Any:
    """The request pi-ai would send model ``ref`` for the context at ``leaf``."""
    from pitools.core.request.build import build_request

    model = resolve_model(ref)
    header = loaded.session.header or {}
    return build_request(loaded.index, leaf, header.get("id"), model, thinking)


def check_requests(files: Sequence[str], model_ref: str) -> list[dict[str, Any]]:
    """``validate --for-model``: the request check at each loadable file's default leaf
    (unloadable files already have their findings from validate)."""
    from pitools.core.request.check import check_request
    from pitools.core.request.common import RequestError
    from pitools.core.session.api import load
    from pitools.errors import PitoolsError
    from pitools.render.request import check_json

    checks: list[dict[str, Any]] = []
    for path in files:
        try:
            loaded = load(path)
        except PitoolsError:
            continue
        try:
            build = build_for(loaded, loaded.leaf(None), model_ref, None)
        except RequestError:
            raise  # an unknown model or unsupported API is the user's to fix: one line, exit 1
        except PitoolsError as exc:
            checks.append({"path": path, "ok": False, "error": str(exc), "findings": []})
            continue
        findings = check_request(build.model, build.payload, build.llm_messages)
        checks.append({"path": path, **check_json(build, findings)})
    return checks
