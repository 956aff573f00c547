"""``pitools request``: the provider request body pi-ai 1.6.0 would send at a leaf, and its checks."""

from __future__ import annotations

import click

from pitools.cli.option_groups import RequestArgs, request_options
from pitools.cli.options import format_option, model_option
from pitools.cli.output import Output, pass_output


@click.command("request")
@request_options(
    model_option(
        "--model",
        "model_ref",
        "The target model, e.g. anthropic/claude-sonnet-4-5 (default: the model at the leaf, as Pi resumes it).",
    ),
    "Thinking level (default: the level at the leaf, as Pi resumes it; clamped to the model).",
)
@click.option("--check", is_flag=True, help="Apply the provider's rules to the body; exit 1 on an error.")
@model_option("--diff-model", "diff_ref", "Compare with the body this model would get.")
@format_option("human", "json")
@pass_output
def command(out: Output, request: RequestArgs, check: bool, diff_ref: str | None, format_: str) -> int:
    """Print the request body pi-ai 1.6.0 would send to a model for the context at a leaf.

    Pi's context at the leaf goes through convertToLlm and normalizeContext, then pi-ai's
    adapter for the model's API (anthropic-messages, openai-completions, openai-responses,
    google-generative-ai): tool-call ids rewritten, foreign thinking dropped, orphaned tool
    calls answered, images handled. --format json prints the body exactly as JSON.stringify
    would; the human view lists roles, block types and sizes and the transformations applied.
    No API key is involved or printed.

    Without --model, the model is the one Pi resumes the session with at the leaf (the
    branch's last model change or assistant reply); stderr names it.

    --check applies known provider rules (tool id patterns, foreign thinking signatures,
    tool results without a call, tool arguments, empty blocks, image data, thinking budgets,
    image and context limits) and exits 1 on an error; the human view then ends with the
    `pitools heal` command that fixes the file for that model. --diff-model A shows what
    changes between model A's body and --model's.

    Pi's settings that change the body are read as Pi reads them (the agent folder's
    settings.json, then the session project's .pi/settings.json if Pi trusts the project):
    defaultThinkingLevel for a session whose branch never set a level, and thinkingBudgets.
    --no-config reads none of them (nor models.json).

    \b
    Example:
      pitools request session.jsonl --model anthropic/claude-sonnet-4-5 --check
      pitools request session.jsonl --model openai/gpt-5 --format json > body.json
      pitools request session.jsonl --diff-model openai/gpt-5 --model anthropic/claude-sonnet-4-5
    """
    from pitools.ops.request import leaf_model, provider_request_at

    if check and diff_ref:
        raise click.UsageError("--check and --diff-model do not combine; run them one at a time")
    at, model_ref, thinking, use_config = request.at, request.model_ref, request.thinking, request.use_config
    loaded, leaf = at.load(out)
    if model_ref is None:
        model_ref = leaf_model(loaded, leaf)
        if model_ref is None:
            raise click.UsageError("no model at this leaf (no model change or reply on its branch): give --model")
        out.message(f"model: {model_ref} (the model at the leaf, as Pi resumes it; --model to choose another)")
    settings = request.settings(out, loaded)
    build = provider_request_at(loaded, leaf, model_ref, thinking, settings, use_config)
    if diff_ref:
        from pitools.render.request import diff_human, diff_json

        other = provider_request_at(loaded, leaf, diff_ref, thinking, settings, use_config)
        diff = diff_json(other, build)
        if format_ == "json":
            out.write_json(diff)
        else:
            out.write_text(diff_human(diff))
        return 0
    if check:
        from pitools.core.request.check import check_request, worst_severity
        from pitools.render.request import check_json, request_human

        findings = check_request(build.model, build.payload, build.llm_messages, build.input_tokens)
        if format_ == "json":
            out.write_json(check_json(build, findings))
        else:
            out.write_text(request_human(build, findings, file=at.file))
        return 1 if worst_severity(findings) == "error" else 0
    if format_ == "json":
        out.write_json(build.payload)
    else:
        from pitools.core.js.json.encode import to_json_bytes
        from pitools.render.request import request_human

        out.write_text(request_human(build, bytes_len=len(to_json_bytes(build.payload))))
    return 0
