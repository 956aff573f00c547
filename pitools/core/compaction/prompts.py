"""pitools' summarization prompts (our own wording) around Pi's exact serialized conversation.

The request layout follows Pi 1.6.0 — the transcript inside ``<conversation>`` tags, the previous
summary inside ``<previous-summary>`` tags when updating, instructions last, and a separate
request for the prefix of a split turn — but the instruction text is pitools'.
"""

from __future__ import annotations

from dataclasses import dataclass

from pitools.core.compaction.prepare import CompactionPreparation

SYSTEM_PROMPT = (
    "You write context checkpoints. You will be shown a transcript of a coding session between a "
    "user and an AI assistant. Do not reply to it, do not continue it and do not answer questions "
    "asked in it: produce only the structured summary requested at the end."
)

_SECTIONS = """## Goal
[The user's objective or objectives.]

## Constraints & Preferences
- [Requirements, preferences and limits the user stated, or "(none)".]

## Progress
### Done
- [x] [Work that is finished.]

### In Progress
- [ ] [Work under way.]

### Blocked
- [Anything stopping progress, if any.]

## Key Decisions
- **[Decision]**: [Why it was made.]

## Next Steps
1. [What should happen next, in order.]

## Critical Context
- [Facts, data or references needed to carry on, or "(none)".]"""

HISTORY_INSTRUCTIONS = f"""The transcript above is the session so far. Write a checkpoint summary another model can \
pick the work up from, using exactly these sections:

{_SECTIONS}

Be brief in each section. Keep file paths, function names and error messages exactly as written."""

UPDATE_INSTRUCTIONS = f"""The transcript above holds only the messages that came after the summary in \
<previous-summary>. Produce the updated summary:
- keep everything from the previous summary that still holds;
- add the new progress, decisions and context;
- move finished items from "In Progress" to "Done" and refresh "Next Steps";
- drop only what is clearly obsolete;
- keep file paths, function names and error messages exactly as written.

Use exactly these sections:

{_SECTIONS}"""

TURN_PREFIX_INSTRUCTIONS = """The conversation above is the beginning of a turn that is still going on; its later \
messages are kept verbatim elsewhere, so do not reconstruct them. Write a short checkpoint of this beginning:

## Original Request
[What the user asked for in this turn.]

## Progress So Far
- [Decisions made and work done in these messages.]

## Context Needed to Continue
- [What the later messages will rely on.]

Use only what the transcript shows; do not guess."""

NO_HISTORY = "No prior history."
TURN_CONTEXT_HEADING = "\n\n---\n\n**Turn Context (split turn):**\n\n"


@dataclass(frozen=True, slots=True)
class PromptRequest:
    """One summarization request: ``kind`` is ``history`` or ``turnPrefix``."""

    kind: str
    system: str
    prompt: str


def history_prompt(conversation: str, previous_summary: str | None, instructions: str | None) -> str:
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += UPDATE_INSTRUCTIONS if previous_summary else HISTORY_INSTRUCTIONS
    if instructions:
        text += f"\n\nAdditional focus: {instructions}"
    return text


def turn_prefix_prompt(conversation: str, instructions: str | None) -> str:
    text = f"# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_INSTRUCTIONS}"
    if instructions:
        text += f"\n\nAdditional focus: {instructions}"
    return text


def summary_requests(prep: CompactionPreparation, instructions: str | None = None) -> list[PromptRequest]:
    """The requests ``compact --apply`` sends, in order (Pi sends the same number, in the same order)."""
    previous = prep.previous_summary if isinstance(prep.previous_summary, str) else None
    out: list[PromptRequest] = []
    split = prep.is_split_turn and bool(prep.turn_prefix_messages)
    if not split or prep.messages_to_summarize:
        out.append(
            PromptRequest(
                "history",
                SYSTEM_PROMPT,
                history_prompt(prep.serialized_conversation(), previous, instructions),
            )
        )
    if split:
        out.append(
            PromptRequest(
                "turnPrefix",
                SYSTEM_PROMPT,
                turn_prefix_prompt(prep.serialized_turn_prefix() or "", instructions),
            )
        )
    return out


def join_summaries(prep: CompactionPreparation, history: str | None, turn_prefix: str | None) -> str:
    """Combine the answers as Pi does, then append the file lists in Pi's tag format."""
    from pitools.core.compaction.prepare import format_file_operations

    if prep.is_split_turn and prep.turn_prefix_messages:
        base = (
            history
            if history is not None
            else (prep.previous_summary if isinstance(prep.previous_summary, str) else NO_HISTORY)
        )
        summary = f"{base}{TURN_CONTEXT_HEADING}{turn_prefix or ''}"
    else:
        summary = history or ""
    read_files, modified_files = prep.file_lists()
    return summary + format_file_operations(read_files, modified_files)
