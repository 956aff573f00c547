"""Golden sessions for ``pitools request``: the shapes that break requests after a model switch.

``write_all()`` writes ``golden/request-*/session.jsonl``; ``scripts/record_requests.mjs`` then
records what pi-ai 1.6.0 sends for them. Each session is built by hand here so the shapes are
known: a Codex tool-call id (``call_…|fc_…`` with ``+/=``, 400+ characters), Anthropic thinking
signatures replayed to another provider, redacted thinking, a thinking block without a signature
(an aborted stream), orphaned tool calls, an error tool result with an image, images for a model
without vision, an aborted assistant turn, Gemini thought signatures, OpenAI reasoning items,
DeepSeek/gpt-oss reasoning fields, a compaction with its system checkpoint, a branch summary,
custom messages, bash executions and mid-session system updates that add and remove tools.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent.parent.parent / "golden"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAFUok9dAAAAAElFTkSuQmCC"
CODEX_ID = "call_8f2KxQ3vLm9Tz1Rb|fc_" + ("Zx+9/Qk=" * 55)
USAGE = {"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1280,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip

TOOLS = [
    {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},  # noqa: E501
    {"name": "bash", "description": "Run a command", "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number", "minimum": 1}}, "required": ["command"]}},  # noqa: E501
    {"name": "pick", "description": "Pick a mode", "parameters": {"type": "object", "properties": {"mode": {"const": "fast"}}, "required": ["mode"]},  # noqa: E501
     "constrainedSampling": {"type": "json_schema", "strict": "prefer"}},
]  # fmt: skip


class _Writer:
    def __init__(self, session_id: str) -> None:
        self.lines: list[dict[str, Any]] = [
            {
                "type": "session",
                "version": 3,
                "id": session_id,
                "timestamp": "2026-11-02T09:00:00.000Z",
                "cwd": "/work/app",
            }
        ]
        self.n = 0
        self.parent: str | None = None

    def add(self, entry: dict[str, Any], parent: str | bool | None = True) -> str:
        self.n += 1
        eid = f"e{self.n:03d}"
        ts = f"2026-11-02T09:{self.n // 60:02d}:{self.n % 60:02d}.000Z"
        pid = self.parent if parent is True else (None if parent is False else parent)
        self.lines.append({"type": entry.pop("type", "message"), "id": eid, "parentId": pid, "timestamp": ts, **entry})
        self.parent = eid
        return eid

    def msg(self, message: dict[str, Any], parent: str | bool | None = True) -> str:
        message.setdefault("timestamp", 1793610000000 + self.n * 1000)
        return self.add({"message": message}, parent)

    def text(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self.lines)


def _assistant(provider: str, api: str, model: str, content: list[Any], stop: str = "toolUse") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": USAGE,
        "stopReason": stop,
    }


def wedges() -> str:
    """A Codex session continued on Anthropic, then Gemini, then DeepSeek, with every hard shape."""
    w = _Writer("019a3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d")
    w.msg(
        {
            "role": "system",
            "content": "",
            "sections": {
                "preamble": "You are an expert coding assistant.",
                "cwd": "Current working directory: /work/app",
            },
            "toolsAdded": TOOLS[:2],
        }
    )
    w.add({"type": "model_change", "provider": "openai-codex", "modelId": "gpt-5.3-codex"})
    w.add({"type": "thinking_level_change", "thinkingLevel": "high"})
    w.msg({"role": "user", "content": "Why does the login test fail?"})
    reasoning = {
        "type": "reasoning",
        "id": "rs_0a1b2c",
        "summary": [{"type": "summary_text", "text": "Look at the test."}],
        "encrypted_content": "gAAAAB" + "q" * 40,
    }
    w.msg(
        _assistant(
            "openai-codex",
            "openai-codex-responses",
            "gpt-5.3-codex",
            [
                {"type": "thinking", "thinking": "Look at the test.", "thinkingSignature": json.dumps(reasoning)},
                {
                    "type": "text",
                    "text": "Reading the test first.",
                    "textSignature": json.dumps({"v": 1, "id": "msg_0c1d", "phase": "commentary"}),
                },
                {"type": "toolCall", "id": CODEX_ID, "name": "read", "arguments": {"path": "tests/login.test.ts"}},
            ],
        )
    )
    w.msg(
        {
            "role": "toolResult",
            "toolCallId": CODEX_ID,
            "toolName": "read",
            "content": [{"type": "text", "text": "expect(login()).toBe(true)"}],
            "isError": False,
        }
    )
    w.msg(
        {
            "role": "system",
            "content": "",
            "sections": {"skills": "<skills>testing</skills>"},
            "toolsAdded": [TOOLS[2]],
            "toolsRemoved": [{"name": "read"}],
        }
    )
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    w.msg(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is the screenshot."},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ],
        }
    )
    w.msg(
        _assistant(
            "anthropic",
            "anthropic-messages",
            "claude-sonnet-4-5",
            [
                {
                    "type": "thinking",
                    "thinking": "The screenshot shows a 401.",
                    "thinkingSignature": "EqQBCkgIARABGAIiQHb3" + "A" * 60,
                },
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": "RedactedPayload0123456789==",
                    "redacted": True,
                },
                {"type": "text", "text": "   "},
                {
                    "type": "toolCall",
                    "id": "toolu_01A2B3C4D5",
                    "name": "bash",
                    "arguments": {"command": "npm test -- login"},
                },
                {"type": "toolCall", "id": "toolu_01Orphan99", "name": "bash", "arguments": {"command": "git log -1"}},
            ],
        )
    )
    w.msg(
        {
            "role": "toolResult",
            "toolCallId": "toolu_01A2B3C4D5",
            "toolName": "bash",
            "content": [{"type": "text", "text": "1 failing"}, {"type": "image", "data": PNG, "mimeType": "image/png"}],
            "isError": True,
        }
    )
    w.msg({"role": "user", "content": "   "})
    fork_point = w.msg({"role": "user", "content": "Keep going."})
    w.msg(
        _assistant(
            "anthropic",
            "anthropic-messages",
            "claude-sonnet-4-5",
            [
                {"type": "thinking", "thinking": "Partial thought with no signature"},
                {"type": "text", "text": "Partial"},
            ],
            stop="aborted",
        )
    )
    w.msg(
        _assistant(
            "anthropic",
            "anthropic-messages",
            "claude-sonnet-4-5",
            [
                {"type": "thinking", "thinking": "Stream ended before the signature."},
                {"type": "text", "text": "The token expired."},
            ],
            stop="stop",
        )
    )
    w.msg(
        {
            "role": "bashExecution",
            "command": "npm test",
            "output": "ok 12 tests",
            "exitCode": 1,
            "cancelled": False,
            "truncated": True,
            "fullOutputPath": "/tmp/out.txt",
        }
    )
    w.msg(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": True,
        }
    )
    w.add({"type": "custom_message", "customType": "reminder", "content": "Remember the CHANGELOG.", "display": True})
    w.add({"type": "model_change", "provider": "google", "modelId": "gemini-2.5-pro"})
    w.msg({"role": "user", "content": "Fix it."})
    w.msg(
        _assistant(
            "google",
            "google-generative-ai",
            "gemini-2.5-pro",
            [
                {"type": "thinking", "thinking": "Refresh the token.", "thinkingSignature": "c2lnbmF0dXJlMQ=="},
                {"type": "text", "text": "", "textSignature": "dGV4dHNpZw=="},
                {
                    "type": "toolCall",
                    "id": "call_gem_1",
                    "name": "bash",
                    "arguments": {"command": "npm test"},
                    "thoughtSignature": "dG9vbHNpZw==",
                },
            ],
        )
    )
    w.msg(
        {
            "role": "toolResult",
            "toolCallId": "call_gem_1",
            "toolName": "bash",
            "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}],
            "isError": False,
        }
    )
    w.add({"type": "model_change", "provider": "deepseek", "modelId": "deepseek-v4-pro"})
    w.msg({"role": "user", "content": "Summarize."})
    w.msg(
        _assistant(
            "deepseek",
            "openai-completions",
            "deepseek-v4-pro",
            [
                {"type": "thinking", "thinking": "Short summary.", "thinkingSignature": "reasoning_content"},
                {"type": "text", "text": "Token refresh fixed."},
            ],
            stop="stop",
        )
    )
    w.msg(
        _assistant(
            "groq",
            "openai-completions",
            "openai/gpt-oss-120b",
            [
                {
                    "type": "thinking",
                    "thinking": "Check details.",
                    "thinkingSignature": json.dumps(
                        [{"type": "reasoning.text", "text": "Check details.", "format": "unknown"}]
                    ),
                },
                {"type": "toolCall", "id": "fc_gptoss_1", "name": "pick", "arguments": {"mode": "fast"}},
            ],
        )
    )
    w.msg(
        {
            "role": "toolResult",
            "toolCallId": "fc_gptoss_1",
            "toolName": "pick",
            "content": [{"type": "text", "text": ""}],
            "isError": False,
        }
    )
    w.msg(
        _assistant(
            "openai",
            "openai-responses",
            "gpt-5",
            [
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": json.dumps(
                        {"type": "reasoning", "id": "rs_9f", "summary": [], "encrypted_content": "gAAAAB" + "z" * 24}
                    ),
                },
                {"type": "text", "text": "Done.", "textSignature": "msg_" + "x" * 70},
                {
                    "type": "toolCall",
                    "id": "call_resp_1|fc_resp_1",
                    "name": "bash",
                    "arguments": {"command": "git status"},
                },
            ],
        )
    )
    w.add({"type": "thinking_level_change", "thinkingLevel": "off"})
    w.msg({"role": "user", "content": "Thanks."})
    # A second branch from the fork point: a branch summary, then a compaction with its checkpoint.
    w.add(
        {
            "type": "branch_summary",
            "fromId": "e016",
            "summary": "Tried a different fix that reverted the token cache.",
        },
        parent=fork_point,
    )
    w.msg({"role": "user", "content": "Back here: try again."})
    w.msg(
        _assistant(
            "anthropic",
            "anthropic-messages",
            "claude-opus-4-7",
            [{"type": "text", "text": "Trying the refresh path."}],
            stop="stop",
        )
    )
    kept = w.msg({"role": "user", "content": "And compact, please."})
    w.add(
        {
            "type": "compaction",
            "summary": "## Goal\nFix the login test.\n\n## Progress\nToken refresh identified.",
            "firstKeptEntryId": kept,
            "tokensBefore": 48000,
            "systemMessage": {
                "role": "system",
                "content": "You are a coding assistant.",
                "toolsAdded": TOOLS[1:],
                "timestamp": 1793610000000,
            },
        }
    )
    w.msg({"role": "user", "content": "Continue after compaction."})
    return w.text()


def handoff() -> str:
    """Codex work resumed on Claude with thinking on, in the middle of a tool loop (README example).

    One earlier turn is labelled with the Anthropic model but was written by Codex through a
    gateway, so pi-ai keeps its Codex call id and OpenAI reasoning item as they are.
    """
    w = _Writer("019a4e5f-6a7b-7c8d-9e0f-a1b2c3d4e5f6")
    w.msg(
        {
            "role": "system",
            "content": "",
            "sections": {"preamble": "You are an expert coding assistant."},
            "toolsAdded": TOOLS[:2],
        }
    )
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    w.add({"type": "thinking_level_change", "thinkingLevel": "high"})
    w.msg({"role": "user", "content": "Refactor the auth module."})
    item = {"type": "reasoning", "id": "rs_68f0c1", "summary": [], "encrypted_content": "gAAAAABo" + "k" * 48}
    gateway_id = "call_Rk2pW9xYb7|fc_68f0c1a2" + "Vb+/=Q" * 8
    w.msg(
        _assistant(
            "anthropic",
            "anthropic-messages",
            "claude-sonnet-4-5",
            [
                {
                    "type": "thinking",
                    "thinking": "Start with the session store.",
                    "thinkingSignature": json.dumps(item),
                },
                {"type": "toolCall", "id": gateway_id, "name": "read", "arguments": {"path": "src/auth/session.ts"}},
            ],
        )
    )
    w.msg(
        {
            "role": "toolResult",
            "toolCallId": gateway_id,
            "toolName": "read",
            "content": [{"type": "text", "text": "export class SessionStore {}"}],
            "isError": False,
        }
    )
    w.add({"type": "model_change", "provider": "openai-codex", "modelId": "gpt-5.3-codex"})
    w.msg({"role": "user", "content": "Now run the tests."})
    codex_id = "call_T0kq81nBv|fc_0d9e" + "Q2+/" * 16
    w.msg(
        _assistant(
            "openai-codex",
            "openai-codex-responses",
            "gpt-5.3-codex",
            [
                {
                    "type": "thinking",
                    "thinking": "Run the auth suite.",
                    "thinkingSignature": json.dumps({**item, "id": "rs_0d9e"}),
                },
                {"type": "toolCall", "id": codex_id, "name": "bash", "arguments": {"command": "npm test -- auth"}},
            ],
        )
    )
    w.msg(
        {
            "role": "toolResult",
            "toolCallId": codex_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": "3 failing"}],
            "isError": False,
        }
    )
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    return w.text()


SONNET = "anthropic/claude-sonnet-4-5"
GPT4O = "openai/gpt-4o"  # Responses, image input
QWEN = "groq/qwen/qwen3.6-27b"  # Chat Completions, image input
LLAMA = "groq/llama-3.3-70b-versatile"  # Chat Completions
GEMINI = "google/gemini-2.5-pro"
GEMINI_LITE = "google/gemini-2.5-flash-lite"


def _check_session(
    n: int, calls: list[Any] | None = None, user: list[Any] | None = None, mcp_tool: bool = False
) -> str:
    """A short Claude session (id ending in ``n``): a tool call for each of ``calls``' arguments,
    or a user turn ``user`` (``mcp_tool``: the tools include an MCP-style ``fs.read``).

    Every line is written with ASCII escapes, so a lone surrogate stays a ``\\udXXX`` escape in
    the file (as Pi writes it) on both the Python and the node side."""
    w = _Writer(f"019b0000-0000-7000-8000-00000000c{n:03d}")
    tools = TOOLS[:2]
    if mcp_tool:
        tools = [*tools, {"name": "fs.read", "description": "Read (MCP)", "parameters": TOOLS[0]["parameters"]}]
    w.msg(
        {"role": "system", "content": "", "sections": {"preamble": "You are a coding assistant."}, "toolsAdded": tools}
    )
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    sonnet = ("anthropic", "anthropic-messages", "claude-sonnet-4-5")
    if user is not None:
        w.msg({"role": "user", "content": user})
        w.msg(_assistant(*sonnet, [{"type": "text", "text": "I see."}], "stop"))
    for k, arguments in enumerate(calls or []):
        w.msg({"role": "user", "content": f"Step {k + 1}."})
        call_id = f"toolu_01Check{k}"
        w.msg(_assistant(*sonnet, [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": arguments}]))
        result = [{"type": "text", "text": "ok"}]
        w.msg({"role": "toolResult", "toolCallId": call_id, "toolName": "bash", "content": result, "isError": False})
    w.msg({"role": "user", "content": "Go on."})
    return "".join(json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n" for line in w.lines)


def _image_turn(label: str, data: str, mime: str) -> list[Any]:
    return [{"type": "text", "text": label}, {"type": "image", "data": data, "mimeType": mime}]


def check_wedges() -> dict[str, Any]:
    """Sessions for the ``--check`` rules that pi-ai 1.6.0 passes to the provider unchanged.

    ``sessions``: name → session text; ``jobs``: per session, the model and options to record
    (``record_requests.mjs --check-wedges``) and the rule codes the provider's documented behaviour
    expects on pi-ai's body.
    """
    log = base64.b64encode(b"Traceback (most recent call last):").decode()
    sessions = {
        "arguments-json-string": _check_session(1, calls=['{"command": "ls -la"}', [1, 2]]),
        "arguments-lone-surrogate": _check_session(2, calls=[{"command": "echo \ud83d cut", "note": "ok \U0001f600"}]),
        "image-png-as-jpeg": _check_session(3, user=_image_turn("Screenshot:", PNG, "image/jpeg")),
        "image-not-an-image": _check_session(4, user=_image_turn("Log:", log, "image/png")),
        "image-empty-data": _check_session(5, user=_image_turn("Empty:", "", "image/png")),
        "image-data-url-in-data": _check_session(
            6, user=_image_turn("Pasted:", f"data:image/png;base64,{PNG}", "image/png")
        ),
        "plain": _check_session(7, calls=[{"command": "ls"}]),
        "mcp-tool-name": _check_session(8, calls=[{"command": "ls"}], mcp_tool=True),
    }
    not_object = ["tool-arguments-not-object", "tool-arguments-not-object"]
    too_small = ["thinking-budget-too-small"]
    every_api = (SONNET, GPT4O, QWEN, GEMINI)
    jobs: dict[str, list[dict[str, Any]]] = {
        "arguments-json-string": [
            {"model": SONNET, "expect": not_object},
            {"model": GEMINI, "thinking": "off", "expect": not_object},
            {"model": LLAMA, "expect": not_object},
            {"model": GPT4O, "expect": []},  # OpenAI's Responses API takes any arguments text
        ],
        "arguments-lone-surrogate": [
            {"model": SONNET, "expect": ["tool-arguments-lone-surrogate"]},
            {"model": LLAMA, "expect": []},  # a \\ud83d escape inside the arguments string: valid JSON
        ],
        "image-png-as-jpeg": [
            {"model": SONNET, "expect": ["image-data-mismatch"]},
            {"model": GPT4O, "expect": []},  # OpenAI reads the PNG whatever the data URL says
        ],
        "image-not-an-image": [
            {"model": SONNET, "expect": ["image-data-mismatch"]},
            {"model": GPT4O, "expect": ["image-data-mismatch"]},
            {"model": QWEN, "thinking": "off", "expect": ["image-data-mismatch"]},
        ],
        "image-empty-data": [{"model": m, "thinking": "off", "expect": ["image-base64-invalid"]} for m in every_api],
        "image-data-url-in-data": [
            {"model": m, "thinking": "off", "expect": ["image-base64-invalid"]} for m in every_api
        ],
        "plain": [
            {"model": SONNET, "thinking": "low", "settings": {"thinkingBudgets": {"low": 500}}, "expect": too_small},
            {"model": SONNET, "thinking": "low", "settings": {"thinkingBudgets": {"low": 1024}}, "expect": []},
            {"model": GEMINI, "thinking": "low", "settings": {"thinkingBudgets": {"low": 100}}, "expect": too_small},
            {
                "model": GEMINI_LITE,
                "thinking": "low",
                "settings": {"thinkingBudgets": {"low": 256}},
                "expect": too_small,
            },
        ],
        "mcp-tool-name": [
            # A tool named fs.read (an MCP server's): Gemini takes it, Anthropic and OpenAI do not.
            {"model": GEMINI, "thinking": "off", "expect": []},
            {"model": SONNET, "expect": ["tool-name-pattern"]},
        ],
    }
    return {
        "sessions": sessions,
        "jobs": [{"case": name, "thinking": None, "settings": {}, **job} for name in sessions for job in jobs[name]],
    }


def write_all() -> list[Path]:
    folders = []
    for name, text in (("request-wedges", wedges()), ("request-handoff", handoff())):
        folder = GOLDEN / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "session.jsonl").write_text(text, encoding="utf-8")
        folders.append(folder)
    target = GOLDEN / "request-wedges" / "check-cases.json"
    target.write_text(json.dumps(check_wedges(), ensure_ascii=True, indent=1) + "\n", encoding="utf-8")
    return folders


if __name__ == "__main__":
    for path in write_all():
        print(path)
