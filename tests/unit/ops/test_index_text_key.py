"""The key that lets entries share one full-text row must not collide on purpose.

Session text may be attacker-written. With a short key (the old 64-bit truncated SHA-1, ~2^32
tries to collide), a crafted text could take the row of another entry's text, and search would
never find that entry. The weak hash is forced here (every SHA-1 digest made equal, so the old
key collided for any two texts); both entries must still be found.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from pitools.ops import index_rows
from pitools.ops.archive import archive_scope, updated_index
from pitools.ops.queries import SearchQuery
from pitools.ops.search import search
from tests.archive_gen import Archive, private_pi_env


def _long(word: str) -> str:
    filler = " ".join(f"row{i} of a long tool output" for i in range(index_rows.DEDUP_MIN // 10))
    return f"{filler} {word} {filler}"


class _WeakSha1:
    """A SHA-1 stand-in whose digest ignores the data: every text collides under the old key."""

    def __init__(self, *_a: Any, **_k: Any) -> None:
        pass

    def update(self, _data: bytes) -> None:
        pass

    def digest(self) -> bytes:
        return b"\x00" * 20

    def hexdigest(self) -> str:
        return "00" * 20


@pytest.mark.parametrize("appended", [False, True])
def test_texts_colliding_under_a_weak_hash_are_all_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, appended: bool
) -> None:
    env = private_pi_env(tmp_path, monkeypatch)
    monkeypatch.setattr(hashlib, "sha1", _WeakSha1)
    a_text, b_text = _long("aardvarkword"), _long("bumblebeeword")
    # The old key: the first 64 bits of SHA-1 (now the weak one) were equal for both texts.
    old = [hashlib.sha1(t.encode(), usedforsecurity=False).digest()[:8] for t in (a_text, b_text)]
    assert old[0] == old[1]
    ar = Archive(tmp_path / "agent", seed=5)
    w = ar.new("/work/app")
    w.conversation(1)
    a_id = w.tool_result(a_text, tool="read")["id"]
    start = len(w.entries)
    w.conversation(1)
    b_id = w.tool_result(b_text, tool="read")["id"]
    w.conversation(1)
    if appended:  # the second text arrives in an append, looked up in the shard's stored keys
        full = w.entries
        w.entries = full[:start]
        w.write()
        _hits(env, "aardvarkword")
        w.entries = full
        w.append(start)
    else:
        w.write()
    assert [h["entryId"] for h in _hits(env, "aardvarkword")] == [a_id]
    assert [h["entryId"] for h in _hits(env, "bumblebeeword")] == [b_id]


def _hits(env: dict[str, str], word: str) -> list[Any]:
    scope = archive_scope(env=env)
    index, _ = updated_index(scope, env=env)
    try:
        assert not index.in_memory
        return search(index, scope, SearchQuery(word, limit=0)).hits
    finally:
        index.close()


def test_key_is_a_full_256_bit_digest() -> None:
    text = _long("x")
    key = index_rows.text_key(text)
    assert key == hashlib.sha256(text.encode()).digest()
    assert index_rows.text_key(_long("y")) != key
    assert index_rows.text_key("short") is None
