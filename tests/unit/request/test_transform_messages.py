"""pi-ai's ``transformMessages`` on what JavaScript's ``trim`` keeps.

The expected content is pi-ai 1.6.0's own output (``transformMessages`` from
``dist/api/transform-messages.js`` run under node on the same messages).
"""

from __future__ import annotations

from pitools.core.request.transform_messages import transform_messages

MODEL = {"provider": "p", "api": "a", "id": "m", "input": ["text"]}


def test_a_thinking_block_javascript_does_not_trim_is_kept() -> None:
    """U+001C is whitespace to Python's ``str.isspace`` but text to JavaScript's ``trim``: pi-ai
    replays the block; one of U+0020 and U+3000 is blank to both and dropped."""
    reply = {
        "role": "assistant", "provider": "p", "api": "a", "model": "m", "stopReason": "stop", "timestamp": 1,
        "content": [
            {"type": "thinking", "thinking": "\x1c"},
            {"type": "thinking", "thinking": " \u3000"},
            {"type": "text", "text": "ok"},
        ],
    }  # fmt: skip
    out = transform_messages([{"role": "user", "content": "hi", "timestamp": 0}, reply], MODEL, None)
    assert out[1]["content"] == [{"type": "thinking", "thinking": "\x1c"}, {"type": "text", "text": "ok"}]
