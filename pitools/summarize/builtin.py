"""The ``builtin`` summarizer: an offline, deterministic, extractive checkpoint.

No model is called and no key is needed. The summary is assembled from the messages
themselves into the sections of Pi's checkpoint format, so a compacted session stays
usable by Pi (and a later real summary can replace it). It is plainly marked as extractive
on its first line. Same input, byte-identical output.

History summary:

* Goal: the first substantive user request (not a slash command such as ``/mode``, not an
  acknowledgement such as "ok" or "thanks"); Constraints & Preferences: later substantive
  user requests;
* Progress: Done = the closing text of each assistant message, In Progress = a last user
  request with no assistant text after it, Blocked = tool results flagged ``isError``;
* Key Decisions: sentences of the assistant's text that state a choice ("I'll use …",
  "instead of …", "decided …"); Next Steps: the last user request still waiting for an
  answer, then sentences that announce what comes next;
* Critical Context: files named by tool-call ``path`` arguments (tool counts are not decisions:
  they appear only in a turn-prefix summary's progress).

Every item is one line, and runs of backticks or tildes that could open a Markdown code
fence are shortened, so each summary's fences are balanced whatever the messages hold.

With ``previous_summary`` the previous sections are kept and the new items added
(In Progress and Next Steps are replaced when there is something new).
Turn-prefix summary: Original Request, Progress So Far, Context Needed to Continue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.request.sanitize_unicode import join_surrogate_pairs, sanitize_surrogates
from pitools.summarize.types import SummaryRequest, SummaryResult
from pitools.summarize.usage import zero_usage

MARKER = "<!-- pitools builtin extractive summary: no model was called -->"
ITEM_CHARS = 240
#: Most items kept per section; older ones are dropped with a note.
MAX_ITEMS = 20
MAX_FILES = 50
NONE = "(none)"

_OMITTED = re.compile(r"^\(\d+ (?:earlier|more) items? omitted\)$")
_BULLET = re.compile(r"^(?:[-*]\s+(?:\[[ xX]\]\s+)?|\d+\.\s+)")
_FILE_BLOCK = re.compile(r"<(read-files|modified-files)>.*?</\1>", re.DOTALL)
_TURN_CONTEXT = re.compile(r"^\*\*Turn Context \(split turn\):\*\*$")


#: Backtick or tilde runs that could open or close a code fence inside an item.
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
#: Replies that are not requests: acknowledgements, greetings, reactions.
_ACKS = frozenset(
    {
        "ok",
        "okay",
        "k",
        "yes",
        "yep",
        "yeah",
        "y",
        "no",
        "nope",
        "sure",
        "thanks",
        "thank",
        "thx",
        "ty",
        "cool",
        "nice",
        "great",
        "wow",
        "yo",
        "hi",
        "hello",
        "hey",
        "go",
        "continue",
        "proceed",
        "done",
        "lgtm",
        "perfect",
        "good",
        "fine",
        "right",
        "alright",
        "awesome",
        "please",
    }
)
_DECISION = re.compile(
    r"\b(?:I'll|I will|I'm going to|let's|we'll|decided|decide to|chose|choose to|instead of|rather than|"
    r"going with|switch(?:ed)? to|opt(?:ed)? for|I kept|keep it|the fix is|the plan is)\b",
    re.IGNORECASE,
)
_NEXT = re.compile(r"\b(?:next|then I|remaining|still need|to do|TODO|follow[- ]up|afterwards)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


def _one_line(text: str, limit: int = ITEM_CHARS) -> str:
    """Whitespace collapsed to single spaces, fence-like runs shortened, cut at ``limit``."""
    flat = _FENCE_RUN.sub(lambda m: m.group()[0] * 2, " ".join(text.split()))
    if len(flat) <= limit:
        return flat
    return f"{flat[:limit].rstrip()}… [+{len(flat) - limit} chars]"


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def substantive(text: str) -> bool:
    """A real request: not a slash command, not a bare acknowledgement or reaction."""
    stripped = text.strip()
    if not stripped or stripped.startswith("/"):
        return False
    words = re.findall(r"[\w']+", stripped.lower())
    if not words:
        return False
    if all(w in _ACKS for w in words):
        return False
    # Scripts written without spaces (Chinese, Japanese) carry a request in one "word".
    return len(words) >= 2 or len(stripped) >= 12 or not stripped.isascii()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _cap(items: Sequence[str], limit: int = MAX_ITEMS, *, keep_first: bool = False) -> list[str]:
    if len(items) <= limit:
        return list(items)
    dropped = len(items) - limit
    if keep_first:
        return [*items[:limit], f"({dropped} more item{'s' if dropped != 1 else ''} omitted)"]
    return [f"({dropped} earlier item{'s' if dropped != 1 else ''} omitted)", *items[-limit:]]


@dataclass
class _Facts:
    """What the extractive summary is made of."""

    user_requests: list[str] = field(default_factory=list)
    #: Every user message (substantive or not), for "is a reply still owed".
    conclusions: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tool_counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    awaiting_reply: bool = False


def _facts(messages: Sequence[dict[str, Any]]) -> _Facts:
    facts = _Facts()
    last_user = -1
    last_answer = -1
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            raw = _text_of(content)
            if substantive(raw):
                facts.user_requests.append(_one_line(raw))
                last_user = index
        elif role == "assistant" and isinstance(content, list):
            texts = [
                str(b.get("text", ""))
                for b in content
                if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
            ]
            if texts:
                facts.conclusions.append(_one_line(texts[-1]))
                last_answer = index
                for sentence in _sentences(" ".join(texts)):
                    if _NEXT.search(sentence):
                        facts.next_steps.append(_one_line(sentence))
                    elif _DECISION.search(sentence):
                        facts.decisions.append(_one_line(sentence))
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "toolCall":
                    continue
                name = str(block.get("name") or "tool")
                facts.tool_counts[name] = facts.tool_counts.get(name, 0) + 1
                args = block.get("arguments")
                path = args.get("path") if isinstance(args, dict) else None
                if isinstance(path, str) and path and path not in facts.files:
                    facts.files.append(path)
        elif role == "toolResult" and message.get("isError"):
            name = str(message.get("toolName") or "tool")
            detail = _one_line(_text_of(content)) or "failed without output"
            facts.errors.append(f"`{name}` failed: {detail}")
    facts.conclusions = _dedupe(facts.conclusions)
    facts.decisions = _dedupe(facts.decisions)
    facts.next_steps = _dedupe(facts.next_steps)
    facts.errors = _dedupe(facts.errors)
    facts.awaiting_reply = last_user > last_answer
    return facts


def _tools_line(facts: _Facts) -> list[str]:
    if not facts.tool_counts:
        return []
    used = ", ".join(
        f"{name} ({count} {'call' if count == 1 else 'calls'})" for name, count in facts.tool_counts.items()
    )
    return [f"Tools used: {used}"]


def _files(facts: _Facts) -> list[str]:
    return [f"`{path}`" for path in facts.files]


def _focus(request: SummaryRequest) -> list[str]:
    if not request.custom_instructions or not request.custom_instructions.strip():
        return []
    note = "Requested focus (noted only; not applied by the extractive summarizer)"
    return [f"{note}: {_one_line(request.custom_instructions)}"]


# -- previous summary -----------------------------------------------------------------

_SECTION_ALIASES = {
    "goal": "goal",
    "original request": "goal",
    "constraints & preferences": "constraints",
    "done": "done",
    "progress so far": "done",
    "in progress": "in_progress",
    "blocked": "blocked",
    "key decisions": "decisions",
    "next steps": "next",
    "critical context": "context",
    "context needed to continue": "context",
}


def parse_sections(summary: str) -> dict[str, list[str]]:
    """Items of each known section of a checkpoint summary (bullets and placeholders removed).

    Pi's appended ``<read-files>``/``<modified-files>`` blocks are dropped (the caller adds
    the cumulative lists again); lines under unknown headings go to Critical Context.
    """
    text = _FILE_BLOCK.sub("", summary)
    sections: dict[str, list[str]] = {}
    current = "context"
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line == MARKER or line == "---" or _TURN_CONTEXT.match(line):
            continue
        heading = re.match(r"^#{2,3}\s+(.*)$", line)
        if heading:
            name = heading.group(1).strip().lower()
            if name == "progress":
                continue
            current = _SECTION_ALIASES.get(name, "context")
            continue
        item = _BULLET.sub("", line, count=1).strip()
        if not item or item == NONE or _OMITTED.match(item):
            continue
        sections.setdefault(current, []).append(item)
    return sections


# -- rendering ------------------------------------------------------------------------


def _bullets(items: Sequence[str], prefix: str = "- ") -> list[str]:
    return [f"{prefix}{item}" for item in items] if items else [f"- {NONE}"]


def _numbered(items: Sequence[str]) -> list[str]:
    return [f"{i}. {item}" for i, item in enumerate(items, 1)] if items else [f"1. {NONE}"]


def _history(request: SummaryRequest) -> str:
    facts = _facts(request.messages)
    users = facts.user_requests
    new = {
        "goal": users[:1],
        "constraints": users[1:-1],
        "done": facts.conclusions,
        "in_progress": users[-1:] if facts.awaiting_reply else [],
        "blocked": facts.errors,
        "decisions": facts.decisions,
        "next": [*(users[-1:] if facts.awaiting_reply else []), *facts.next_steps[-3:]],
        "context": [*_files(facts), *_focus(request)],
    }
    if request.previous_summary:
        old = parse_sections(request.previous_summary)
        if old.get("goal"):
            # The goal is already known: every new request but the last is a later request,
            # and so is the previous summary's next step once a newer request exists.
            earlier_next = [item for item in old.get("next", []) if users and item not in users[-1:]]
            new["goal"] = []
            new["constraints"] = [*earlier_next, *users[:-1]]
        for key, items in new.items():
            if key in ("in_progress", "next"):
                new[key] = items or old.get(key, [])
            else:
                new[key] = _dedupe([*old.get(key, []), *items])
    for key in ("constraints", "done", "blocked", "decisions"):
        new[key] = _cap(new[key])
    new["goal"] = _cap(new["goal"], keep_first=True)
    new["context"] = _cap(new["context"], MAX_FILES, keep_first=True)
    lines = [MARKER, "", "## Goal"]
    lines += new["goal"] if new["goal"] else [NONE]
    lines += ["", "## Constraints & Preferences", *_bullets(new["constraints"])]
    lines += ["", "## Progress", "### Done", *_bullets(new["done"], "- [x] ")]
    lines += ["", "### In Progress", *_bullets(new["in_progress"], "- [ ] ")]
    lines += ["", "### Blocked", *_bullets(new["blocked"])]
    lines += ["", "## Key Decisions", *_bullets(new["decisions"])]
    lines += ["", "## Next Steps", *_numbered(new["next"])]
    lines += ["", "## Critical Context", *_bullets(new["context"])]
    return "\n".join(lines)


def _turn_prefix(request: SummaryRequest) -> str:
    facts = _facts(request.messages)
    progress = [*_cap(facts.conclusions), *_tools_line(facts)]
    context = [*_cap(facts.errors), *_cap(_files(facts), MAX_FILES, keep_first=True), *_focus(request)]
    lines = [MARKER, "", "## Original Request"]
    lines += facts.user_requests[:1] or [NONE]
    lines += ["", "## Progress So Far", *_bullets(progress)]
    lines += ["", "## Context Needed to Continue", *_bullets(context)]
    return "\n".join(lines)


def extractive_summary(request: SummaryRequest) -> str:
    """The summary text for ``request`` (kind ``history`` or ``turnPrefix``)."""
    return _turn_prefix(request) if request.kind == "turnPrefix" else _history(request)


class BuiltinSummarizer:
    """A ``Summarizer`` that never calls a model."""

    provider = "pitools"
    model = "builtin"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Build the extractive summary; usage and cost are zero."""
        return SummaryResult(
            # Session text may hold lone surrogates (JavaScript strings); keep them out of
            # the summary, and join the pairs, so it can be written as UTF-8 JSON.
            text=join_surrogate_pairs(sanitize_surrogates(extractive_summary(request))),
            usage=zero_usage(),
            stop_reason="stop",
            provider=self.provider,
            model=self.model,
            attempts=1,
        )

    def __repr__(self) -> str:
        return "BuiltinSummarizer()"
