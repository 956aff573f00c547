#!/usr/bin/env python3
"""Generate big, realistic Pi 1.6.0 (v3) session files for the benchmarks, deterministically.

A session here looks like a long day of tool-heavy agent work: a full system message and later
system patches, model and thinking-level changes, user prompts followed by long runs of
assistant turns (thinking blocks, text, several read/edit/write/bash/grep tool calls each) and
tool results of several KB, usage on every assistant reply, a compaction whenever the context
passes Pi's threshold (window 200,000 - reserve 16,384), a few branches with branch summaries,
context edits on recent tool results, labels and a session name. The file ends on a finished
assistant reply, so Pi's default leaf (the last entry) is a normal branch tip.

The same ``--seed`` and size always give byte-identical files (no clock, no ``random`` global).

Shapes (``--shape``): ``compacted`` (the default: Pi auto-compacts as above), ``never`` (no
compaction, so the context is the whole branch), ``branches`` (a /tree branch after a quarter of the
turns: hundreds of leaves), ``tool-images`` (a third of the reads return a base64 PNG of 13-160
KB), ``chatty`` (like ``compacted`` with texts and outputs at about half the length: many short
entries), ``images`` (screenshots pasted by the user and returned by a screenshot tool, 40-330 KB each:
most of the bytes; ``text`` is another name for ``compacted``).

Usage: scripts/gen_big.py [--sizes 1,10,100] [--seed 1] [--shape compacted] [--out bench/data]
       writes <out>/big-<N>mb.jsonl for each size N (megabytes, 10**6 bytes)
"""

from __future__ import annotations

import argparse
import datetime as _dt
import random
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / "data"

#: Pi compacts when context > contextWindow - reserveTokens (defaults: 200000 - 16384).
COMPACT_AT_TOKENS = 200_000 - 16_384
KEEP_RECENT_TOKENS = 20_000

WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "for",
    "on",
    "with",
    "this",
    "that",
    "we",
    "can",
    "be",
    "as",
    "not",
    "are",
    "file",
    "test",
    "function",
    "value",
    "error",
    "return",
    "config",
    "session",
    "entry",
    "leaf",
    "branch",
    "path",
    "context",
    "token",
    "compaction",
    "summary",
    "model",
    "tool",
    "call",
    "result",
    "parse",
    "load",
    "write",
    "read",
    "edit",
    "bash",
    "grep",
    "module",
    "import",
    "export",
    "class",
    "const",
    "let",
    "async",
    "await",
    "string",
    "number",
    "array",
    "object",
    "null",
    "undefined",
    "index",
    "parent",
    "child",
    "tree",
    "node",
    "cache",
    "usage",
    "cost",
    "provider",
    "message",
    "user",
    "assistant",
    "system",
    "thinking",
    "level",
    "stream",
    "retry",
    "timeout",
    "update",
    "check",
    "ensure",
    "fix",
    "add",
    "remove",
    "rename",
    "refactor",
    "migrate",
    "build",
    "project",
    "label",
    "header",
    "version",
    "line",
    "offset",
    "byte",
    "json",
    "schema",
    "validate",
    "report",
    "finding",
    "warning",
    "severity",
    "exit",
    "code",
    "option",
    "flag",
    "argument",
    "default",
]
NON_ASCII = ["é", "ü", "ñ", "漢字", "テスト", "🚀", "—", "…", "€"]
FILES = [
    "src/session/manager.ts",
    "src/session/loader.ts",
    "src/compaction/compaction.ts",
    "src/compaction/utils.ts",
    "src/cli/main.ts",
    "src/cli/args.ts",
    "src/tools/read.ts",
    "src/tools/edit.ts",
    "src/tools/bash.ts",
    "src/ui/tree.tsx",
    "src/ui/editor.tsx",
    "tests/session.test.ts",
    "tests/compaction.test.ts",
    "package.json",
    "tsconfig.json",
    "README.md",
    "docs/sessions.md",
    "scripts/build.sh",
    "src/index.ts",
    "src/model/registry.ts",
    "src/model/anthropic.ts",
    "src/model/openai.ts",
    "src/util/paths.ts",
]
CODE_TEMPLATES = [
    "export function {a}{B}({c}: {T}): {T2} {{",
    "  const {a} = await {c}.{b}({d});",
    '  if (!{a}) throw new Error("{w} {w2} {w3}");',
    "  for (const {a} of {c}.{b}) {{",
    "    {a}.{b}({c}, {d});",
    "  return {{ {a}, {b}: {c} }};",
    "}}",
    "// {w} {w2} {w3} {w4} {w5}",
    'import {{ {A}{B} }} from "./{a}/{b}.js";',
    "  private {a}{B}: Map<string, {T}> = new Map();",
    "",
]
TYPES = ["string", "number", "SessionEntry", "Message[]", "Promise<void>", "boolean", "TreeNode", "Usage"]
MODELS = [("anthropic", "claude-sonnet-4-5", "anthropic-messages"), ("openai", "gpt-5", "openai-responses")]


#: Session shapes: how often the agent compacts, branches and reads images.
SHAPES = ("compacted", "never", "branches", "tool-images", "images", "chatty")


class Gen:
    def __init__(self, seed: int, target_bytes: int, shape: str = "compacted") -> None:
        if shape not in SHAPES:
            raise ValueError(f"unknown shape {shape!r} (one of {', '.join(SHAPES)})")
        self.r = random.Random(seed)
        self.shape = shape
        self.target = target_bytes
        self.lines: list[bytes] = []
        self.size = 0
        self.ids: set[str] = set()
        self.time = _dt.datetime(2026, 3, 2, 8, 0, 0, tzinfo=_dt.UTC)
        #: entries of the current branch, root first: (id, type, role, tokens)
        self.path: list[tuple[str, str, str | None, int]] = []
        self.context_tokens = 0
        self.provider, self.model, self.api = MODELS[0]
        self.call_n = 0
        self.read_files: set[str] = set()
        self.modified_files: set[str] = set()
        self.turns = 0
        #: ``chatty``: every text, thinking block and tool output at about half the length, so a
        #: 100 MB file holds about 55,000 entries (the viewer's 50,000-entry scale target).
        self.scale = 0.45 if shape == "chatty" else 1.0

    # -- primitives ---------------------------------------------------------------------------
    def new_id(self) -> str:
        while True:
            v = f"{self.r.getrandbits(32):08x}"
            if v not in self.ids:
                self.ids.add(v)
                return v

    def tick(self, seconds: float) -> str:
        self.time += _dt.timedelta(milliseconds=int(seconds * 1000))
        return self.time.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.time.microsecond // 1000:03d}Z"

    def ms(self) -> int:
        return int(self.time.timestamp() * 1000)

    def words(self, n: int) -> str:
        r = self.r
        out = r.choices(WORDS, k=n)
        if n > 8 and r.random() < 0.3:
            out[r.randrange(n)] = r.choice(NON_ASCII)
        text = " ".join(out)
        return text[0].upper() + text[1:] + "."

    def paragraphs(self, chars: int) -> str:
        chars = int(chars * self.scale)
        parts = []
        total = 0
        while total < chars:
            p = self.words(self.r.randint(12, 60))
            parts.append(p)
            total += len(p) + 2
        return "\n\n".join(parts)

    def code(self, chars: int) -> str:
        chars = int(chars * self.scale)
        r = self.r
        out = []
        total = 0
        n = 1
        while total < chars:
            w = r.choices(WORDS, k=9)
            line = r.choice(CODE_TEMPLATES).format(
                a=w[0],
                b=w[1],
                c=w[2],
                d=w[3],
                A=w[4].capitalize(),
                B=w[5].capitalize(),
                T=r.choice(TYPES),
                T2=r.choice(TYPES),
                w=w[6],
                w2=w[7],
                w3=w[8],
                w4=w[0],
                w5=w[1],
            )
            line = f"{n:>5}\t{line}"
            out.append(line)
            total += len(line) + 1
            n += 1
        return "\n".join(out)

    def emit(self, entry: dict[str, Any], role: str | None = None, tokens: int = 0, on_path: bool = True) -> str:
        line = orjson.dumps(entry) + b"\n"
        self.lines.append(line)
        self.size += len(line)
        if on_path:
            self.path.append((entry["id"], entry["type"], role, tokens))
            self.context_tokens += tokens
        return entry["id"]

    def base(self, etype: str, seconds: float = 1.0) -> dict[str, Any]:
        return {
            "type": etype,
            "id": self.new_id(),
            "parentId": self.path[-1][0] if self.path else None,
            "timestamp": self.tick(seconds),
        }

    # -- entries ---------------------------------------------------------------------------------
    def header(self) -> None:
        h = {
            "type": "session",
            "version": 3,
            "id": "0195f3a2-7c1e-7d4b-9a61-5b2e8c0d4f17",
            "timestamp": self.tick(0),
            "cwd": "/home/dev/projects/pi-session-tools",
        }
        line = orjson.dumps(h) + b"\n"
        self.lines.append(line)
        self.size += len(line)

    def model_change(self) -> None:
        self.provider, self.model, self.api = self.r.choice(MODELS)
        e = self.base("model_change")
        e.update(provider=self.provider, modelId=self.model)
        self.emit(e)

    def thinking_change(self) -> None:
        e = self.base("thinking_level_change")
        e["thinkingLevel"] = self.r.choice(["low", "medium", "high"])
        self.emit(e)

    def system_full(self) -> None:
        tools = [
            {
                "name": n,
                "description": self.words(12),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": self.words(8)},
                        "offset": {"type": "number", "description": self.words(6)},
                    },
                    "required": ["path"],
                },
            }
            for n in ("read", "edit", "write", "bash", "grep")
        ]
        msg = {
            "role": "system",
            "content": "",
            "sections": {
                "preamble": "You are an expert coding assistant operating inside pi. " + self.paragraphs(1500),
                "tools": "<tools>\n" + "\n".join(f"- {t['name']}: {t['description']}" for t in tools) + "\n</tools>",
                "guidelines": self.paragraphs(2500),
                "cwd": "Current working directory: /home/dev/projects/pi-session-tools",
            },
            "toolsAdded": tools,
            "timestamp": self.ms(),
        }
        e = self.base("message")
        e["message"] = msg
        self.emit(e, "system", 1500)

    def system_patch(self) -> None:
        e = self.base("message")
        e["message"] = {
            "role": "system",
            "content": "",
            "sections": {"cwd": f"Current working directory: /home/dev/projects/{self.r.choice(WORDS)}"},
            "timestamp": self.ms(),
        }
        self.emit(e, "system", 20)

    def user(self) -> None:
        text = self.paragraphs(self.r.randint(80, 1200))
        e = self.base("message", self.r.uniform(20, 300))
        e["message"] = {"role": "user", "content": text, "timestamp": self.ms()}
        self.emit(e, "user", len(text) // 4 + 1)

    def tool_call(self) -> dict[str, Any]:
        r = self.r
        self.call_n += 1
        name = r.choices(["read", "edit", "write", "bash", "grep"], weights=[5, 3, 1, 3, 2])[0]
        path = r.choice(FILES)
        args: dict[str, Any]
        if name == "read":
            args = {"path": path}
            if r.random() < 0.3:
                args.update(offset=r.randint(1, 400), limit=200)
            self.read_files.add(path)
        elif name == "edit":
            args = {
                "path": path,
                "oldText": self.code(r.randint(80, 600)),
                "newText": self.code(r.randint(80, 700)),
            }
            self.modified_files.add(path)
        elif name == "write":
            args = {"path": path, "content": self.code(r.randint(500, 4000))}
            self.modified_files.add(path)
        elif name == "bash":
            args = {
                "command": r.choice(
                    [
                        "npm test",
                        "npx tsc --noEmit",
                        "git status",
                        "ls -la src",
                        f"npx vitest run {path}",
                        "git diff --stat",
                    ]
                )
            }
        else:
            args = {"pattern": r.choice(WORDS), "path": "src", "glob": "*.ts"}
        return {
            "type": "toolCall",
            "id": f"toolu_{self.call_n:06d}{r.getrandbits(40):010x}",
            "name": name,
            "arguments": args,
        }

    def usage(self, output: int) -> dict[str, Any]:
        r = self.r
        cache_read = int(self.context_tokens * r.uniform(0.6, 0.95))
        inp = max(1, self.context_tokens - cache_read)
        cache_write = r.randint(0, 3000)
        u = {
            "input": inp,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": inp + output + cache_read + cache_write,
        }
        u["cost"] = {
            "input": inp * 3e-6,
            "output": output * 15e-6,
            "cacheRead": cache_read * 3e-7,
            "cacheWrite": cache_write * 3.75e-6,
        }
        u["cost"]["total"] = sum(u["cost"].values())
        return u

    def assistant(self, final: bool) -> list[dict[str, Any]]:
        r = self.r
        content: list[dict[str, Any]] = []
        if r.random() < 0.85:
            thinking = self.paragraphs(r.randint(200, 2500))
            bits = r.getrandbits(128)
            # What each API stores: an opaque string for Anthropic; for OpenAI's Responses API the
            # reasoning item as JSON, which pi-ai parses back into the request (a "sig_" string
            # there made pi-ai throw, so the page's request check of such a leaf was not built).
            signature = (
                f'{{"id":"rs_{bits:032x}","type":"reasoning","summary":[]}}'
                if self.api == "openai-responses"
                else f"sig_{bits:032x}"
            )
            content.append({"type": "thinking", "thinking": thinking, "thinkingSignature": signature})
        if final or r.random() < 0.5:
            content.append({"type": "text", "text": self.paragraphs(r.randint(60, 1500 if final else 400))})
        calls = [] if final else [self.tool_call() for _ in range(r.choices([1, 2, 3], weights=[6, 3, 1])[0])]
        content.extend(calls)
        chars = sum(len(orjson.dumps(b)) for b in content)
        e = self.base("message", r.uniform(2, 40))
        e["message"] = {
            "role": "assistant",
            "content": content,
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage(chars // 4),
            "stopReason": "stop" if final else "toolUse",
            "timestamp": self.ms(),
            "responseId": f"msg_{r.getrandbits(64):016x}",
        }
        self.emit(e, "assistant", chars // 4 + 1)
        return calls

    def tool_result(self, call: dict[str, Any]) -> None:
        r = self.r
        name = call["name"]
        if name == "read" and self.shape == "tool-images" and r.random() < 0.35:
            self.image_result(call)
            return
        if name == "read":
            text = self.code(r.randint(1500, 9000))
        elif name == "bash":
            text = self.paragraphs(r.randint(200, 5000))
        elif name == "grep":
            text = "\n".join(
                f"{r.choice(FILES)}:{r.randint(1, 900)}: {self.words(10)}" for _ in range(r.randint(3, 60))
            )
        else:
            text = f"Successfully {'edited' if name == 'edit' else 'wrote'} {call['arguments']['path']}"
        e = self.base("message", r.uniform(0.05, 8))
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": r.random() < 0.04,
            "timestamp": self.ms(),
        }
        if name == "bash":
            msg["details"] = {"exitCode": 0 if not msg["isError"] else 1, "durationMs": r.randint(30, 60000)}
        e["message"] = msg
        self.emit(e, "toolResult", len(text) // 4 + 1)

    def image_result(self, call: dict[str, Any]) -> None:
        """A ``read`` of a screenshot: a short text block and a base64 PNG of 13-160 KB (Pi counts
        an image as 4,800 characters, so these sessions grow in bytes much faster than in tokens)."""
        import base64

        r = self.r
        data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + r.randbytes(r.randint(10_000, 120_000))).decode()
        e = self.base("message", r.uniform(0.05, 2))
        e["message"] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": "read",
            "content": [
                {"type": "text", "text": f"Read image file [image/png] {call['arguments']['path']}"},
                {"type": "image", "data": data, "mimeType": "image/png"},
            ],
            "isError": False,
            "timestamp": self.ms(),
        }
        self.emit(e, "toolResult", 1200 + 12)

    def turn(self) -> None:
        r = self.r
        self.turns += 1
        self.user()
        for _ in range(r.randint(2, 14)):
            for call in self.assistant(final=False):
                self.tool_result(call)
            if self.context_tokens > COMPACT_AT_TOKENS:
                self.compaction()
        self.assistant(final=True)
        if self.context_tokens > COMPACT_AT_TOKENS:
            self.compaction()

    def compaction(self) -> None:
        """Pi's auto-compaction: keep about KEEP_RECENT_TOKENS, cut at a user/assistant entry."""
        if self.shape == "never":  # auto-compaction off (or a model with a huge window)
            return
        acc = 0
        first_kept = None
        for i in range(len(self.path) - 1, -1, -1):
            eid, etype, role, tokens = self.path[i]
            if etype == "compaction":
                break
            acc += tokens
            if acc >= KEEP_RECENT_TOKENS and role in ("user", "assistant"):
                first_kept = (i, eid)
                break
        if first_kept is None:
            return
        summary = (
            "## Goal\n"
            + self.words(25)
            + "\n\n## Progress\n### Done\n"
            + "\n".join(f"- [x] {self.words(12)}" for _ in range(self.r.randint(3, 10)))
            + "\n\n### In Progress\n- [ ] "
            + self.words(15)
            + "\n\n## Key Decisions\n"
            + "\n".join(f"- {self.words(18)}" for _ in range(4))
            + "\n\n## Next Steps\n1. "
            + self.words(14)
        )
        read_only = sorted(self.read_files - self.modified_files)
        modified = sorted(self.modified_files)
        if read_only:
            summary += "\n\n<read-files>\n" + "\n".join(read_only) + "\n</read-files>"
        if modified:
            summary += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
        e = self.base("compaction", 30)
        e.update(
            summary=summary,
            firstKeptEntryId=first_kept[1],
            tokensBefore=self.context_tokens,
            details={"readFiles": read_only, "modifiedFiles": modified},
            fromHook=False,
        )
        kept = sum(t for _, _, _, t in self.path[first_kept[0] :])
        self.emit(e, None, 0)
        self.context_tokens = kept + len(summary) // 4

    def context_edit(self) -> None:
        results = [p for p in self.path[-60:] if p[2] == "toolResult"]
        if not results:
            return
        target = self.r.choice(results)
        e = self.base("context_edit", 0.5)
        if self.r.random() < 0.5:
            e.update(targetId=target[0], replacement=None)
        else:
            e.update(
                targetId=target[0],
                replacement={"content": [{"type": "text", "text": "[edited] " + self.words(20)}]},
            )
        self.emit(e, None, 0)
        self.context_tokens = max(0, self.context_tokens - target[3] // 2)

    def branch(self) -> None:
        """/tree back to an earlier assistant reply, with a branch summary of the abandoned tail."""
        candidates = [i for i, p in enumerate(self.path[:-4]) if p[2] == "assistant" and i > len(self.path) - 200]
        if not candidates:
            return
        i = self.r.choice(candidates)
        old_leaf = self.path[-1][0]
        dropped = sum(p[3] for p in self.path[i + 1 :])
        self.path = self.path[: i + 1]
        self.context_tokens = max(0, self.context_tokens - dropped)
        e = self.base("branch_summary", 5)
        e.update(fromId=old_leaf, summary="The user explored a different approach: " + self.paragraphs(600))
        self.emit(e, "branchSummary", 160)

    def label(self) -> None:
        target = self.r.choice(self.path[-40:])
        e = self.base("label", 0.2)
        e.update(targetId=target[0], label=self.r.choice(["checkpoint", "good state", "before refactor", "🚩"]))
        self.emit(e)

    def session_info(self) -> None:
        e = self.base("session_info", 0.2)
        e["name"] = "Refactor the session loader and compaction"
        self.emit(e)

    # -- the whole session ----------------------------------------------------------------------
    def run(self, join: bool = True) -> bytes:
        r = self.r
        self.header()
        self.model_change()
        self.thinking_change()
        self.system_full()
        self.session_info()
        while self.size < self.target:
            self.turn()
            x = r.random()
            if x < (0.25 if self.shape == "branches" else 0.02):
                self.branch()
            elif x < 0.05:
                self.context_edit()
            elif x < 0.06:
                self.system_patch()
            elif x < 0.07:
                self.label()
            elif x < 0.075:
                self.model_change()
            elif x < 0.08:
                self.thinking_change()
        # End on a finished assistant reply so the default leaf is a normal tip.
        if self.path and self.path[-1][2] != "assistant":
            self.assistant(final=True)
        return b"".join(self.lines) if join else b""


def generate(size_mb: float, seed: int, shape: str = "compacted") -> bytes:
    """The bytes of one session of about ``size_mb`` megabytes (10**6 bytes), seeded."""
    return Gen(seed * 1000 + int(size_mb * 10), int(size_mb * 1_000_000), shape).run()


class ImageGen(Gen):
    """An image-heavy session: screenshots pasted by the user and returned by a screenshot tool.

    Base64 images (40 KB to 330 KB each) make up most of the bytes, as in the
    multi-GB sessions users report; compactions still happen, so older images end up in no
    leaf's context (what ``pitools slim --images`` removes).
    """

    def image(self) -> dict[str, Any]:
        import base64

        data = base64.b64encode(self.r.randbytes(self.r.randint(30_000, 250_000))).decode("ascii")
        return {"type": "image", "data": data, "mimeType": self.r.choice(["image/png", "image/jpeg"])}

    def user(self) -> None:
        text = self.paragraphs(self.r.randint(80, 600))
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [self.image() for _ in range(self.r.choice([0, 1, 1, 2]))]
        e = self.base("message", self.r.uniform(20, 300))
        e["message"] = {"role": "user", "content": content, "timestamp": self.ms()}
        images = len(content) - 1
        self.emit(e, "user", len(text) // 4 + 1 + 1200 * images)

    def tool_result(self, call: dict[str, Any]) -> None:
        if self.r.random() < 0.12:
            e = self.base("message", self.r.uniform(0.05, 8))
            e["message"] = {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "content": [{"type": "text", "text": "Screenshot taken"}, self.image()],
                "isError": False,
                "timestamp": self.ms(),
            }
            self.emit(e, "toolResult", 1200 + 5)
        else:
            super().tool_result(call)


def generate_images(size_mb: float, seed: int) -> bytes:
    """Like :func:`generate`, but most bytes are base64 images (``--shape images``)."""
    return ImageGen(seed * 1000 + int(size_mb * 10) + 7, int(size_mb * 1_000_000)).run()


def file_name(size: str, shape: str = "compacted") -> str:
    """``big-<N>mb.jsonl`` (auto-compacted), ``images-<N>mb.jsonl``, ``big-<shape>-<N>mb.jsonl``."""
    if shape in ("compacted", "text"):
        return f"big-{size}mb.jsonl"
    return f"images-{size}mb.jsonl" if shape == "images" else f"big-{shape}-{size}mb.jsonl"


def write_session(target: Path, size_mb: float, seed: int, shape: str) -> None:
    """Generate straight to ``target`` (through a temp name), without holding 1 GB of lines twice."""
    if shape == "images":
        gen: Gen = ImageGen(seed * 1000 + int(size_mb * 10) + 7, int(size_mb * 1_000_000))
    else:
        gen = Gen(seed * 1000 + int(size_mb * 10), int(size_mb * 1_000_000), "compacted" if shape == "text" else shape)
    gen.run(join=False)
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        fh.writelines(gen.lines)
    tmp.replace(target)
    print(f"gen_big: wrote {target} ({gen.size:,} bytes, {len(gen.lines):,} lines)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1,10,100", help="comma-separated sizes in MB (default 1,10,100)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--shape", default="compacted", choices=[*SHAPES, "text"], help="session shape (default compacted)")
    p.add_argument("--force", action="store_true", help="regenerate even if the file exists")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for part in args.sizes.split(","):
        target = args.out / file_name(part.strip(), args.shape)
        if target.exists() and not args.force:
            print(f"gen_big: {target} exists (use --force to regenerate)", file=sys.stderr)
            continue
        write_session(target, float(part), args.seed, args.shape)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
