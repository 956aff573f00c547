"""``pitools request`` and ``validate --for-model``: the body pi-ai would send a model at a leaf.

The building and the provider rules are core's (:mod:`pitools.core.request`); this module adds
what reads the user's configuration (the agent folder's ``models.json``; ``defaultThinkingLevel``
and ``thinkingBudgets`` from Pi's settings files, the project's only where Pi trusts it) and the files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pitools.core.request.build import RequestBuild


def resolve_model(ref: str, use_config: bool = True) -> dict[str, Any]:
    """``--model PROVIDER/ID`` → pi-ai's model object: Pi's catalogue, then the agent folder's
    models.json (not read with ``use_config=False``; ignored, as Pi ignores it, when broken)."""
    from pitools.core.request.common import RequestError
    from pitools.core.request.models import resolve_request_model
    from pitools.piconfig.catalog import chat_models
    from pitools.piconfig.resolver import load_pi_config

    models = load_pi_config(os.environ, use_config=use_config).models
    try:
        return resolve_request_model(ref, chat_models(), {"providers": dict(models.data)})
    except RequestError as exc:
        if not models.problems:
            raise
        raise RequestError(f"{exc.message} ({'; '.join(models.problems)})", path=exc.path, line=exc.line) from None


def request_settings(loaded: Any, use_config: bool = True) -> Any:
    """Pi's ``defaultThinkingLevel`` and ``thinkingBudgets`` for the session (its cwd's project)."""
    from pitools.core.compaction.settings import resolve_request_settings

    cwd = (loaded.session.header or {}).get("cwd")
    return resolve_request_settings(session_cwd=cwd if type(cwd) is str else None, use_config=use_config)


def leaf_model(loaded: Any, leaf: Any) -> str | None:
    """``PROVIDER/ID`` of the model Pi resumes ``loaded`` with at ``leaf`` (None: the branch names none)."""
    from pitools.core.request.build import branch_model

    return branch_model(loaded.index, leaf)


def provider_request_at(
    loaded: Any, leaf: Any, ref: str, thinking: str | None, settings: Any = None, use_config: bool = True
) -> RequestBuild:
    """The provider request (body, model, messages) pi-ai would send model ``ref`` for the
    context at ``leaf``, with the settings Pi would apply (``settings``: a :func:`request_settings`
    result, read here when None). Not the summarizer's: that is :mod:`pitools.ops.summarizing`."""
    from pitools.core.request.build import build_request

    model = resolve_model(ref, use_config)
    if settings is None:
        settings = request_settings(loaded, use_config)
    header = loaded.session.header or {}
    level = settings.default_thinking_level
    budgets = settings.thinking_budgets
    return build_request(
        loaded.index,
        leaf,
        header.get("id"),
        model,
        thinking,
        default_level=None if level is None else level.value,
        budgets=None if budgets is None else budgets.value,
    )


def check_requests(files: Sequence[str], model_ref: str, *, use_config: bool = True) -> list[dict[str, Any]]:
    """``validate --for-model``: the request check at each loadable file's default leaf
    (unloadable files already have their findings from validate); ``use_config=False`` reads
    none of Pi's config files (``--no-config``)."""
    from pitools.core.request.build import check_api
    from pitools.core.request.check import check_request
    from pitools.core.session.load import load
    from pitools.errors import PitoolsError
    from pitools.render.request import check_json

    # An unknown model or an API pitools does not build is the user's to fix: one line, exit 1.
    check_api(resolve_model(model_ref, use_config))
    checks: list[dict[str, Any]] = []
    for path in files:
        try:
            loaded = load(path)
        except PitoolsError:
            continue
        try:
            build = provider_request_at(loaded, loaded.leaf(None), model_ref, None, use_config=use_config)
        except PitoolsError as exc:  # this file's request cannot be built (a shape pi-ai throws on)
            checks.append({"path": path, "ok": False, "error": str(exc), "findings": []})
            continue
        findings = check_request(build.model, build.payload, build.llm_messages, build.input_tokens)
        checks.append({"path": path, **check_json(build, findings)})
    return checks


def leaf_check(loaded: Any, leaf: Any, *, use_config: bool = True) -> dict[str, Any]:
    """The request check at ``leaf`` for the model Pi resumes the session with there (the viewer
    and ``serve`` show it on the session's page): :func:`check_json`'s record plus ``heal``, the
    command that fixes what it found; or ``{"leafId", "error"}`` when no body can be built (the
    branch names no model, the model is unknown, pi-ai would throw)."""
    from pitools.core.request.build import check_api
    from pitools.core.request.check import check_request
    from pitools.errors import PitoolsError
    from pitools.render.request import check_json, heal_command

    leaf_id = leaf if leaf is not None else loaded.index.leaf_id
    ref = leaf_model(loaded, leaf_id)
    if ref is None:
        return {"leafId": leaf_id, "error": "no model on this branch"}
    try:
        check_api(resolve_model(ref, use_config))
        build = provider_request_at(loaded, leaf_id, ref, None, use_config=use_config)
    except PitoolsError as exc:
        return {"leafId": leaf_id, "model": ref, "error": str(exc)}
    findings = check_request(build.model, build.payload, build.llm_messages, build.input_tokens)
    out = check_json(build, findings)
    if findings:
        out["heal"] = heal_command(loaded.path, ref)
    return out
