"""``pitools heal``: the plan (and what was written) as text."""

from __future__ import annotations

from typing import Any

from pitools.core.js.types import JsValue
from pitools.render.safe import safe_text


def heal_human(outcome: Any, *, file: str, model_ref: str, mode: str) -> str:
    """``mode``: "dry-run", "apply" or "new"."""
    plan = outcome.plan
    lines = [f"model     {model_ref}", f"leaf      {plan.leaf_id}"]
    lines += ["", "before healing:", *_findings(plan)]
    if outcome.rewrites:
        lines += ["", f"tool call ids rewritten in the new session ({len(outcome.rewrites)}):"]
        for rw in outcome.rewrites:
            answered = f", result(s) {', '.join(map(str, rw.results))}" if rw.results else ""
            lines.append(f"  {rw.entry_id}  {_short(rw.old)} -> {rw.new}  ({rw.why}{answered})")
    if plan.remedies:
        lines += ["", f"remedies ({len(plan.entries)} context_edit entr{'y' if len(plan.entries) == 1 else 'ies'}):"]
        for r in plan.remedies:
            lines.append(f"  {r.entry_id}  {r.role}: {r.change}  [{', '.join(r.why)}]")
            lines.append(f"      the model no longer sees: {r.loses}")
    if plan.unhealed:
        lines += ["", "not healable by a context edit:"]
        for u in plan.unhealed:
            lines.append(f"  {u.code} at {u.path or '-'}: {u.advice}")
    lines.append("")
    needed = bool(plan.entries or outcome.rewrites)
    errors_left = sum(1 for f in plan.after if f.severity == "error")
    after = "clean" if not errors_left else f"{errors_left} error(s) left"
    if mode == "new":
        lines.append(f"after healing: {after}; new session written to {outcome.written_to}")
        lines.append(f"Pi's leaf: {plan.new_leaf_id}")
    elif not needed:
        lines.append("nothing to heal" if not plan.unhealed else "nothing pitools can heal")
        if mode == "apply":
            lines.append("nothing written")
    elif mode == "dry-run":
        lines.append(f"after healing: {after}; dry run, nothing written.")
        command = f"pitools heal {_arg(file)} --for-model {_arg(model_ref)}"
        if file == "-":
            lines.append(f"write: {command} -o NEW")
        else:
            lines.append(f"apply: {command} --apply   (or -o NEW / --new for a new session)")
    else:
        lines.append(f"after healing: {after}; written to {outcome.written_to}")
        if outcome.backup:
            lines.append(f"backup: {outcome.backup}")
        lines.append(f"Pi's leaf: {plan.new_leaf_id}")
    return safe_text("\n".join(lines)) + "\n"


def _findings(plan: Any) -> list[str]:
    """The check's findings, each with the entries whose edit answers it."""
    if not plan.before:
        return ["  no provider rule is broken"]
    out = []
    for f, ids in zip(plan.before, plan.healed_by_finding(), strict=True):
        where = f" at {f.path}" if f.path else ""
        out.append(f"  {f.severity:<7} {f.code}{where}: {f.message}")
        if ids:
            out.append(f"          healed by editing {', '.join(map(str, ids))}")
    return out


def _short(value: JsValue) -> str:
    text = value if type(value) is str else repr(value)
    return repr(text[:45] + "..." if len(text) > 48 else text)


def _arg(text: str) -> str:
    import shlex

    return shlex.quote(text)
