"""Golden cases for ``pitools heal``: a wedged session, healed in place and as a new session.

``write_all()`` writes, for each case, ``golden/heal-<case>/session.jsonl`` (the wedge),
``healed.jsonl`` (after ``heal --apply``) and ``healed-new.jsonl`` (after ``heal -o``), with fixed
ids and times so the files are reproducible; ``scripts/record_requests.mjs --heal`` then records,
for each file, Pi 1.6.0's default leaf, Pi's LLM messages there and pi-ai's body for the target.
The oracle's view of each healed file (every leaf) is ``healed.pi.json.xz`` /
``healed-new.pi.json.xz``. Run: ``python -m tests.golden.heal_cases --record`` (from the project
root; needs node and the reference), then ``node scripts/record_requests.mjs --heal``;
``make golden`` runs both.
"""

from __future__ import annotations

import datetime as _dt
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.golden.request_cases import GOLDEN, PNG, TOOLS, USAGE, _Writer

NOW = _dt.datetime(2026, 11, 3, 10, 0, 0, tzinfo=_dt.UTC)
SESSION_ID = "019a5f60-0000-7000-8000-0000000000a1"
#: case -> (target model, how the wedge is made).
CASES: dict[str, str] = {
    "heal-handoff": "anthropic/claude-sonnet-4-5",
    "heal-wedges": "anthropic/claude-sonnet-4-5",
    "heal-gemini": "google/gemini-3.5-flash",
    "heal-images": "anthropic/claude-haiku-4-5",
    "heal-ids": "groq/llama-3.3-70b-versatile",
    "heal-empty-ids": "anthropic/claude-sonnet-4-5",
}


def _assistant(content: list[Any], model: str = "claude-sonnet-4-5", stop: str = "toolUse") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
            "model": model, "usage": USAGE, "stopReason": stop}  # fmt: skip


def wedges() -> str:
    """One session with each shape an edit heals: an image type Anthropic refuses, a duplicate
    tool call id, a tool result whose call is gone, empty text blocks, and a turn of nothing but
    another provider's thinking."""
    w = _Writer("019a5f60-1111-7222-8333-444455556666")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    w.add({"type": "thinking_level_change", "thinkingLevel": "off"})
    w.msg(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this screenshot?"},
                {"type": "image", "data": PNG, "mimeType": "image/bmp"},
            ],
        }
    )
    w.msg(_assistant([{"type": "text", "text": "A login form."}], stop="stop"))
    w.msg({"role": "user", "content": "Read the config twice."})
    w.msg(_assistant([{"type": "toolCall", "id": "toolu_dup", "name": "read", "arguments": {"path": "a.json"}}]))
    w.msg({"role": "toolResult", "toolCallId": "toolu_dup", "toolName": "read",
           "content": [{"type": "text", "text": "{\"a\": 1}"}], "isError": False})  # fmt: skip
    w.msg(_assistant([{"type": "toolCall", "id": "toolu_dup", "name": "read", "arguments": {"path": "b.json"}}]))
    w.msg({"role": "toolResult", "toolCallId": "toolu_dup", "toolName": "read",
           "content": [{"type": "text", "text": "{\"b\": 2}"}], "isError": False})  # fmt: skip
    w.msg(_assistant([{"type": "text", "text": ""}, {"type": "text", "text": "Both read."}], stop="stop"))
    w.msg({"role": "user", "content": "And the log?"})
    w.msg({"role": "toolResult", "toolCallId": "toolu_gone", "toolName": "bash",
           "content": [{"type": "text", "text": "log line"}], "isError": False})  # fmt: skip
    w.msg(_assistant([{"type": "text", "text": "The log has one line."}], stop="stop"))
    w.msg({"role": "user", "content": "Thanks."})
    return w.text()


def gemini() -> str:
    """A Claude tool loop switched to Gemini 3 mid-loop: the open call has no thought signature."""
    w = _Writer("019a5f60-2222-7333-8444-555566667777")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    w.msg({"role": "user", "content": "Run the tests."})
    thinking = {"type": "thinking", "thinking": "Run them.", "thinkingSignature": "EqQBCkYIBxgCKkA" + "x" * 60}
    call = {"type": "toolCall", "id": "toolu_01A", "name": "bash", "arguments": {"command": "npm test"}}
    w.msg(_assistant([thinking, call]))
    w.msg({"role": "toolResult", "toolCallId": "toolu_01A", "toolName": "bash",
           "content": [{"type": "text", "text": "2 failing"}], "isError": False})  # fmt: skip
    w.add({"type": "model_change", "provider": "google", "modelId": "gemini-3.5-flash"})
    return w.text()


def images() -> str:
    """104 screenshots over four turns for a model that takes 100 per request."""
    w = _Writer("019a5f60-3333-7444-8555-666677778888")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-haiku-4-5"})
    w.add({"type": "thinking_level_change", "thinkingLevel": "off"})
    for k in range(4):
        shots = [{"type": "image", "data": PNG, "mimeType": "image/png"}] * 26
        w.msg({"role": "user", "content": [{"type": "text", "text": f"Batch {k} of screenshots."}, *shots]})
        w.msg(_assistant([{"type": "text", "text": f"Seen batch {k}."}], model="claude-haiku-4-5", stop="stop"))
    w.msg({"role": "user", "content": "Compare them."})
    return w.text()


def long_ids() -> str:
    """A Chat Completions session whose own tool call id is longer than OpenAI's 40 characters."""
    w = _Writer("019a5f60-4444-7555-8666-777788889999")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "groq", "modelId": "llama-3.3-70b-versatile"})
    w.msg({"role": "user", "content": "List the files."})
    long_id = "call_" + "a1B2c3D4e5" * 5
    groq = {"api": "openai-completions", "provider": "groq", "model": "llama-3.3-70b-versatile", "usage": USAGE}
    call = {"type": "toolCall", "id": long_id, "name": "bash", "arguments": {"command": "ls"}}
    w.msg({"role": "assistant", "content": [call], **groq, "stopReason": "toolUse"})
    w.msg({"role": "toolResult", "toolCallId": long_id, "toolName": "bash",
           "content": [{"type": "text", "text": "a.ts b.ts"}], "isError": False})  # fmt: skip
    w.msg({"role": "assistant", "content": [{"type": "text", "text": "Two files."}], **groq, "stopReason": "stop"})
    w.msg({"role": "user", "content": "Thanks."})
    return w.text()


def empty_ids() -> str:
    """A local model's two parallel calls with empty ids (Pi #4854, #6796), then a switch to Claude."""
    w = _Writer("019a5f60-5555-7666-8777-88889999aaaa")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "ollama", "modelId": "qwen3"})
    w.msg({"role": "user", "content": "Check both files."})
    local = {"api": "openai-completions", "provider": "ollama", "model": "qwen3", "usage": USAGE}
    calls = [{"type": "toolCall", "id": "", "name": "read", "arguments": {"path": p}} for p in ("a.ts", "b.ts")]
    w.msg({"role": "assistant", "content": calls, **local, "stopReason": "toolUse"})
    for text in ("export const a = 1", "export const b = 2"):
        w.msg({"role": "toolResult", "toolCallId": "", "toolName": "read",
               "content": [{"type": "text", "text": text}], "isError": False})  # fmt: skip
    w.msg({"role": "assistant", "content": [{"type": "text", "text": "Both fine."}], **local, "stopReason": "stop"})
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    w.msg({"role": "user", "content": "Now with Claude: add b to a."})
    return w.text()


def _ids(prefix: str) -> Callable[[Callable[[str], bool]], str]:
    count = 0

    def make(taken: Callable[[str], bool]) -> str:
        nonlocal count
        count += 1
        return f"{prefix}{count:04x}"

    return make


def heal_files(folder: Path, model_ref: str) -> None:
    """``healed.jsonl`` and ``healed-new.jsonl`` beside ``folder/session.jsonl``, reproducibly."""
    from pitools.core.compaction.plan import compaction_line
    from pitools.core.request.heal import plan_heal, rewrite_tool_ids
    from pitools.core.session.fork import NewSessionOptions, clone_session
    from pitools.core.session.load import load
    from pitools.ops.request import resolve_model

    source = folder / "session.jsonl"
    loaded = load(str(source))
    model = resolve_model(model_ref, use_config=False)
    sid = (loaded.session.header or {}).get("id")
    plan = plan_heal(loaded.session.entries, loaded.leaf(None), sid, model, None, now=NOW, new_id=_ids("hea1"))
    lines = b"".join(compaction_line(e) for e in plan.entries)  # the bytes --apply appends
    (folder / "healed.jsonl").write_bytes(source.read_bytes() + lines)
    opts = NewSessionOptions(now=NOW, session_id=SESSION_ID, parent_session=str(source.name), process_cwd="/work/app")
    new = clone_session(loaded, loaded.leaf(None), opts)
    entries, _ = rewrite_tool_ids(new.entries)
    new_plan = plan_heal(entries, new.leaf_id, SESSION_ID, model, None, now=NOW, new_id=_ids("hea2"))
    new.entries = [*entries, *new_plan.entries]
    (folder / "healed-new.jsonl").write_bytes(b"".join(new.lines()))


def plan_for(folder: Path, file: str, model_ref: str) -> Any:
    """pitools' dry-run plan for the file that was healed into ``folder/<file>``: for ``healed.jsonl``
    the wedge's plan, for ``healed-new.jsonl`` (``-o``) the clone's, with its tool ids rewritten."""
    from pitools.core.request.heal import plan_heal, rewrite_tool_ids
    from pitools.core.session.load import load
    from pitools.ops.request import resolve_model

    loaded = load(str(folder / "session.jsonl"))
    entries: list[Any] = list(loaded.session.entries)
    leaf = loaded.leaf(None)
    if file == "healed-new.jsonl":
        new = load(str(folder / file))
        kept = [e for e in new.session.entries if e.get("type") != "context_edit"]
        entries, _ = rewrite_tool_ids(kept)
        leaf = kept[-1]["id"]
    sid = (loaded.session.header or {}).get("id")
    prefix = "hea2" if file == "healed-new.jsonl" else "hea1"
    model = resolve_model(model_ref, use_config=False)
    return plan_heal(entries, leaf, sid, model, None, now=NOW, new_id=_ids(prefix))


def messages_by_entry(loaded: Any, llm: list[Any]) -> dict[Any, list[str]]:
    """Pi's LLM messages at the default leaf (``llm``), grouped by the entry each comes from (the
    JSON text of each), through pitools' mapping of messages to entries."""
    from pitools.core.js.json.encode import js_stringify
    from pitools.core.request.heal import _context

    ctx = _context(loaded.index, loaded.leaf(None), llm)
    out: dict[Any, list[str]] = {}
    for owner, message in zip(ctx.owners, llm, strict=True):
        out.setdefault(owner.source_id, []).append(js_stringify(message) or "")
    return out


def assert_only_named_changed(
    named: set[Any], before: Any, after: Any, before_pi: list[Any], after_pi: list[Any]
) -> None:
    """Pi's messages from every entry no remedy names are byte-identical before and after
    healing (``before``/``after``: the loaded files; ``*_pi``: Pi's LLM messages at their leaves),
    and every named entry's did change."""
    old, new = messages_by_entry(before, before_pi), messages_by_entry(after, after_pi)
    assert named and named <= set(old)
    for eid, messages in old.items():
        if eid not in named:
            assert new.get(eid) == messages, eid
    for eid in named:
        assert new.get(eid) != old[eid], eid


def record_extra(folder: Path, oracle: Path, ref: Path) -> None:
    """Pi's results (the oracle, every leaf) on ``healed.jsonl`` and ``healed-new.jsonl``."""
    import lzma
    import os
    import subprocess

    env = dict(os.environ, PI_REF_DIR=str(ref), TZ="UTC")
    for name in ("healed", "healed-new"):
        cmd = ["node", str(oracle), str(folder / f"{name}.jsonl"), "--all-leaves"]
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=300, check=False)
        blob = proc.stdout if proc.returncode == 0 else b'{"error": "crash"}'
        (folder / f"{name}.pi.json.xz").write_bytes(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))


def write_all() -> list[Path]:
    folders = []
    for name, model_ref in CASES.items():
        folder = GOLDEN / name
        folder.mkdir(parents=True, exist_ok=True)
        if name == "heal-handoff":
            shutil.copyfile(GOLDEN / "request-handoff" / "session.jsonl", folder / "session.jsonl")
        else:
            make = {"heal-wedges": wedges, "heal-gemini": gemini, "heal-images": images, "heal-ids": long_ids,
                    "heal-empty-ids": empty_ids}[name]  # fmt: skip
            (folder / "session.jsonl").write_text(make(), encoding="utf-8")
        (folder / "target.txt").write_text(model_ref + "\n", encoding="utf-8")
        heal_files(folder, model_ref)
        folders.append(folder)
    return folders


if __name__ == "__main__":
    import sys

    from tests.support import load_script

    record_golden = load_script("record_golden")
    for path in write_all():
        if "--record" in sys.argv:
            record_extra(path, record_golden.oracle_script(), record_golden.reference_dir())
        print(path)
