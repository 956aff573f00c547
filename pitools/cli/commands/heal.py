"""``pitools heal``: make a session resumable on a model, with Pi's own context edits."""

from __future__ import annotations

import click

from pitools.cli.commands.fork import _SESSION_DIR_META
from pitools.cli.option_groups import RequestArgs, request_options
from pitools.cli.options import format_option, model_option
from pitools.cli.output import Output, pass_output


@click.command("heal")
@request_options(
    model_option(
        "--for-model",
        "model_ref",
        "The model the session should resume on, e.g. anthropic/claude-sonnet-4-5.",
        required=True,
    ),
    "Thinking level to check with (default: the level at the leaf, as Pi resumes it).",
)
@click.option("--dry-run", "dry_run", is_flag=True, help="Show the findings and remedies; never writes (the default).")
@click.option("--apply", "apply_", is_flag=True, help="Append Pi's context_edit entries to FILE (keeps a backup).")
@click.option("-o", "--output", metavar="NEW", default=None, help="Write a new session (like /clone) to NEW instead.")
@click.option("--new", "new_", is_flag=True, help="Write the new session where Pi's /clone would, named like Pi's.")
@click.option("--no-backup", is_flag=True, help="With --apply: do not keep FILE.bak-<time>.")
@click.option("--yes", is_flag=True, help="With --apply: do not ask before writing.")
@format_option("human", "json")
@pass_output
def command(
    out: Output,
    request: RequestArgs,
    dry_run: bool,
    apply_: bool,
    output: str | None,
    new_: bool,
    no_backup: bool,
    yes: bool,
    format_: str,
) -> int:
    """Heal a session every request to a model fails on: the request check's findings at a
    leaf, and for each the remedy Pi itself can express.

    The dry run (the default) lists the findings of `pitools request --check`, each remedy
    (entry id, what changes, why) and what the model will no longer see; exit 0 when
    nothing needs healing, 1 when something does.

    --apply appends context_edit entries, as Pi's own context editing does: an entry left out
    of the context or given new content (a foreign thinking block removed, an image the API
    refuses replaced by a note, a tool exchange the API refuses rewritten as plain text). No
    existing line changes; the new entries chain from the leaf, so Pi resumes on the healed
    branch. A backup is kept unless --no-backup; the write is refused if the file changed.

    -o NEW writes a new session instead, like Pi's /clone (the leaf's path, parentSession
    naming FILE, FILE untouched), where tool call ids no API takes (empty, duplicate, foreign
    characters, too long) are rewritten on the call and its results, and the other remedies
    are context_edit entries. --new writes it where Pi's /clone would (the configured session
    folder, else beside FILE), named as Pi names it. Exit 0 when the healed request passes
    every rule.

    \b
    Examples:
      pitools heal session.jsonl --for-model anthropic/claude-sonnet-4-5
      pitools heal session.jsonl --for-model anthropic/claude-sonnet-4-5 --apply --yes
      pitools heal session.jsonl --for-model openai/gpt-5 -o healed.jsonl
    """
    chosen = (("--dry-run", dry_run), ("--apply", apply_), ("-o", output is not None), ("--new", new_))
    modes = [name for name, on in chosen if on]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} do not combine; choose one")
    if no_backup and not apply_:
        raise click.UsageError("--no-backup only applies to --apply")
    if yes and not apply_:
        raise click.UsageError("--yes only applies to --apply")
    from pitools.cli.options import from_stdin

    if (apply_ or new_) and from_stdin():
        raise click.UsageError("a session read from stdin cannot be healed in place or beside itself: use -o NEW")

    from pitools.core.request.check import worst_severity
    from pitools.ops import heal as ops
    from pitools.render.heal import heal_human

    at, model_ref, thinking, use_config = request.at, request.model_ref, request.thinking, request.use_config
    assert model_ref is not None  # --for-model is required
    stamp = None
    if apply_:
        from pitools import store

        stamp = store.stamp(at.file)  # before the read: anything appended after it is noticed
    loaded, leaf = at.load(out)
    settings = request.settings(out, loaded)
    if output is not None or new_:
        outcome = ops.write_new(
            loaded,
            leaf,
            model_ref,
            thinking,
            output,
            settings=settings,
            use_config=use_config,
            warn=lambda note: out.message(f"warning: {note}"),
            session_dir=None if output else click.get_current_context().meta.get(_SESSION_DIR_META),
        )
        mode = "new"
    else:
        plan = ops.plan_for(loaded, leaf, model_ref, thinking, settings=settings, use_config=use_config)
        outcome = ops.HealOutcome(plan)
        mode = "apply" if apply_ else "dry-run"
        if apply_ and stamp is not None and plan.entries:
            if not yes and not _consent(out, at.file, len(plan.entries)):
                out.message("nothing written")
                return 1
            outcome = ops.apply_in_place(at.file, stamp, loaded, plan, backup=not no_backup)
    if format_ == "json":
        out.write_json(outcome.to_json())
    else:
        shown = "-" if from_stdin() else at.file  # the temporary copy of stdin is nobody's file
        out.write_text(heal_human(outcome, file=shown, model_ref=model_ref, mode=mode))
    if mode == "dry-run":
        return 1 if outcome.plan.entries or worst_severity(outcome.plan.before) == "error" else 0
    return 1 if worst_severity(outcome.plan.after) == "error" else 0


def _consent(out: Output, file: str, count: int) -> bool:
    """Ask at a terminal; without one, ``--apply`` itself is the consent."""
    from pitools.cli.option_groups import confirm_at_terminal

    ask = confirm_at_terminal(out)
    if ask is None:
        return True
    return ask(f"Append {count} context_edit entr{'y' if count == 1 else 'ies'} to {file}?")
