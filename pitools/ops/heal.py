"""``pitools heal``: make a session resumable on a target model, the way Pi itself edits context.

The plan is core's (:mod:`pitools.core.request.heal`); this module reads Pi's settings the way
``pitools request`` does and writes: ``--apply`` appends the ``context_edit`` entries in place
(the one append of :mod:`pitools.ops.append`, with a backup, refused if the file changed since
it was read); ``-o`` writes a new session like Pi's ``/clone`` (the leaf's path,
``parentSession`` naming the original), with the tool call ids no API takes rewritten on both
sides, and the edits appended. The original is never touched by ``-o``.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from pitools import store
from pitools.core.request.heal import HealPlan, IdRewrite


@dataclass(slots=True)
class HealOutcome:
    """A plan and what was written for it."""

    plan: HealPlan
    written_to: str | None = None
    backup: str | None = None
    rewrites: list[IdRewrite] = field(default_factory=list)
    new_session: Any = None

    def to_json(self) -> dict[str, Any]:
        data = self.plan.to_json()
        data["idRewrites"] = [r.to_json() for r in self.rewrites]
        data["written"] = self.written_to is not None
        data["writtenTo"] = self.written_to
        data["backup"] = self.backup
        if self.new_session is not None:
            data["newSession"] = self.new_session.to_json()
        return data


def plan_for(
    loaded: Any,
    leaf: Any,
    model_ref: str,
    thinking: str | None,
    *,
    settings: Any = None,
    use_config: bool = True,
    entries: list[Any] | None = None,
    session_id: Any = None,
    now: _dt.datetime | None = None,
) -> HealPlan:
    """The heal plan for ``model_ref`` at ``leaf`` (``entries``/``session_id``: another set of entries
    to plan over, e.g. a new session's)."""
    from pitools.core.request.heal import plan_heal
    from pitools.ops.request import request_settings, resolve_model

    model = resolve_model(model_ref, use_config)
    if settings is None:
        settings = request_settings(loaded, use_config)
    level, budgets = settings.default_thinking_level, settings.thinking_budgets
    header = loaded.session.header or {}
    return plan_heal(
        loaded.session.entries if entries is None else entries,
        leaf,
        header.get("id") if session_id is None else session_id,
        model,
        thinking,
        default_level=None if level is None else level.value,
        budgets=None if budgets is None else budgets.value,
        now=now,
    )


def apply_in_place(path: str, stamp: store.FileStamp, loaded: Any, plan: HealPlan, *, backup: bool) -> HealOutcome:
    """``--apply``: the plan's ``context_edit`` entries appended after the leaf they were planned at.

    Pi's default leaf is the file's last entry; when it is not the healed leaf (``--leaf`` named
    another branch) the edits still chain from the healed leaf, so they start a new last entry
    there and Pi resumes on the healed branch."""
    from pitools.errors import PitoolsError

    if loaded.session.migration.needed:
        raise PitoolsError(
            "this session needs migration to v3 before Pi appends to it; run `pitools migrate --in-place` first",
            path=path,
        )
    if not plan.entries:
        return HealOutcome(plan)
    from pitools.ops.append import append_entries

    # The one append compact --apply and navigate --summarize make: the final check right before
    # one write, a complete last line without newline terminated in it, a torn one refused.
    done = append_entries(path, stamp, loaded, plan.entries, backup=backup)
    return HealOutcome(plan, written_to=done.written_to, backup=done.backup)


def write_new(
    loaded: Any,
    leaf: Any,
    model_ref: str,
    thinking: str | None,
    output: str | None,
    *,
    settings: Any = None,
    use_config: bool = True,
    now: _dt.datetime | None = None,
    session_id: str | None = None,
    warn: Any = None,
    session_dir: Any = None,
) -> HealOutcome:
    """``-o NEW`` (or ``--new``: ``output`` None, written where Pi's ``/clone`` would write it, named
    as Pi names it): Pi's ``/clone`` of the leaf's path, tool ids rewritten, then the remaining edits."""
    from pitools.core.request.heal import rewrite_tool_ids
    from pitools.core.session.fork import NewSessionOptions, clone_session
    from pitools.ops.newsession import write_where_pi_would

    new = clone_session(loaded, leaf, NewSessionOptions(now=now, session_id=session_id))
    entries, rewrites = rewrite_tool_ids(new.entries)
    new.entries = entries
    plan = plan_for(
        loaded,
        new.leaf_id,
        model_ref,
        thinking,
        settings=settings,
        use_config=use_config,
        entries=entries,
        session_id=new.session_id,
        now=now,
    )
    from pitools.core.request.check import check_request
    from pitools.ops.request import provider_request_at

    original = provider_request_at(loaded, leaf, model_ref, thinking, settings, use_config)
    plan.before = check_request(original.model, original.payload, original.llm_messages, original.input_tokens)
    plan.healed_by = []  # the original's findings: the rewrites and the clone's edits answer them together
    new.entries = [*entries, *plan.entries]
    written = write_where_pi_would(new, loaded.path, output, session_dir=session_dir, warn=warn)
    return HealOutcome(plan, written_to=written, rewrites=rewrites, new_session=new)
