"""Generate Pi session archives whose true usage totals are known by construction.

Every usage record a writer creates gets a unique *origin* token; a fork or clone copies entries
(same ids, same timestamps, as Pi's ``createBranchedSession`` does) and with them their origins.
The true archive total is then the sum over the distinct origins of the files present: what
``pitools usage`` must report when copied history is counted once. Used by the index tests and
by ``scripts/bench_archive.py`` (which writes far bigger archives).
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

_origins = itertools.count(1)
MODELS = [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5"), ("google", "gemini-2.5-pro")]
WORDS = [
    "index",
    "tree",
    "leaf",
    "branch",
    "fork",
    "clone",
    "session",
    "usage",
    "cost",
    "token",
    "parse",
    "stream",
    "build",
    "cache",
    "search",
    "compact",
    "summary",
    "context",
    "message",
    "tool",
    "result",
    "bash",
    "read",
    "write",
    "edit",
    "file",
    "error",
    "retry",
    "model",
    "provider",
    "config",
    "test",
    "check",
    "value",
    "path",
    "entry",
    "header",
    "migrate",
    "label",
    "thinking",
    "assistant",
    "user",
]


@dataclass
class Usage:
    origin: int
    ts: int  # ms
    provider: str
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float
    source: str


def usage_obj(u: Usage) -> dict[str, Any]:
    return {
        "input": u.input,
        "output": u.output,
        "cacheRead": u.cache_read,
        "cacheWrite": u.cache_write,
        "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": u.cost},
    }


def iso(ms: int) -> str:
    when = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


@dataclass
class Writer:
    """One session file being written, entry by entry (ids are 8 hex, as Pi makes them)."""

    path: Path
    header: dict[str, Any]
    rng: random.Random
    clock: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    origins: dict[str, Usage] = field(default_factory=dict)  # entry id -> usage record it carries
    leaf: str | None = None
    ids: set[str] = field(default_factory=set)
    id_prefix: str | None = None

    def new_id(self) -> str:
        while True:
            if self.id_prefix is not None:
                eid = f"{self.id_prefix}{len(self.ids):04x}"
            else:
                eid = f"{self.rng.getrandbits(32):08x}"
            if eid not in self.ids:
                self.ids.add(eid)
                return eid

    def _tick(self) -> int:
        self.clock += self.rng.randint(1_000, 90_000)
        return self.clock

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        ms = self._tick()
        entry = {"type": kind, "id": self.new_id(), "parentId": self.leaf, "timestamp": iso(ms), **fields}
        self.entries.append(entry)
        self.leaf = entry["id"]
        return entry

    def _usage(self, source: str, provider: str | None = None, model: str | None = None) -> Usage:
        p, m = self.rng.choice(MODELS)
        return Usage(
            next(_origins),
            self.clock,
            provider or p,
            model or m,
            self.rng.randint(10, 5000),
            self.rng.randint(10, 2000),
            self.rng.randint(0, 50000),
            self.rng.randint(0, 3000),
            round(self.rng.uniform(0.0001, 0.5), 6),
            source,
        )

    def text(self, n: int = 12) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    # -- entry kinds -----------------------------------------------------------------------------
    def user(self, text: str | None = None) -> dict[str, Any]:
        ms = self.clock
        return self.add("message", message={"role": "user", "content": text or self.text(), "timestamp": ms})

    def assistant(
        self, text: str | None = None, *, tool: tuple[str, dict[str, Any]] | None = None, thinking: str | None = None
    ) -> dict[str, Any]:
        self._tick()
        u = self._usage("assistant")
        content: list[dict[str, Any]] = []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking})
        content.append({"type": "text", "text": text or self.text()})
        if tool:
            content.append(
                {"type": "toolCall", "id": f"call_{self.rng.getrandbits(32):x}", "name": tool[0], "arguments": tool[1]}
            )
        message = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": u.provider,
            "model": u.model,
            "usage": usage_obj(u),
            "stopReason": "toolUse" if tool else "stop",
            "timestamp": self.clock,
        }
        entry = self.add("message", message=message)
        u.ts = _ms(entry)
        self.origins[entry["id"]] = u
        return entry

    def tool_result(self, text: str, *, tool: str = "bash", with_usage: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": "call",
            "toolName": tool,
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": self.clock,
        }
        u = self._usage("toolResult", "Tools", "summaries") if with_usage else None
        if u:
            message["usage"] = usage_obj(u)
        entry = self.add("message", message=message)
        if u:
            u.ts = _ms(entry)
            self.origins[entry["id"]] = u
        return entry

    def compaction(self, first_kept: str, summary: str | None = None) -> dict[str, Any]:
        u = self._usage("compaction", "Tools", "summaries")
        entry = self.add(
            "compaction",
            summary=summary or "## Goal\n" + self.text(),
            firstKeptEntryId=first_kept,
            tokensBefore=self.rng.randint(1000, 100000),
            usage=usage_obj(u),
        )
        u.ts = _ms(entry)
        self.origins[entry["id"]] = u
        return entry

    def branch_summary(self, from_id: str, summary: str | None = None) -> dict[str, Any]:
        u = self._usage("branch_summary", "Tools", "summaries")
        entry = self.add("branch_summary", fromId=from_id, summary=summary or self.text(), usage=usage_obj(u))
        u.ts = _ms(entry)
        self.origins[entry["id"]] = u
        return entry

    def usage_entry(self) -> dict[str, Any]:
        u = self._usage("usage")
        entry = self.add("usage", provider=u.provider, model=u.model, usage=usage_obj(u))
        u.ts = _ms(entry)
        self.origins[entry["id"]] = u
        return entry

    def branch_from(self, entry_id: str | None) -> None:
        """The next entry's parent (Pi's /tree navigation)."""
        self.leaf = entry_id

    def conversation(self, turns: int, *, big: int = 0) -> None:
        for _ in range(turns):
            self.user()
            self.assistant(tool=("bash", {"command": "ls " + self.rng.choice(WORDS)}))
            self.tool_result(self.text(40) + ("\n" + self.text(200)) * big)
            self.assistant()

    # -- files -------------------------------------------------------------------------------------
    def lines(self) -> bytes:
        return b"".join(orjson.dumps(v) + b"\n" for v in (self.header, *self.entries))

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(self.lines())
        _settle(self.path)
        return self.path

    def append(self, start: int) -> None:
        """Append the entries from position ``start`` on (what Pi does while a session runs)."""
        with open(self.path, "ab") as fh:
            fh.write(b"".join(orjson.dumps(e) + b"\n" for e in self.entries[start:]))
        _settle(self.path)

    def path_to(self, entry_id: str) -> list[dict[str, Any]]:
        by_id = {e["id"]: e for e in self.entries}
        out = []
        cur: str | None = entry_id
        while cur is not None:
            out.append(by_id[cur])
            cur = by_id[cur]["parentId"]
        return out[::-1]


def _ms(entry: dict[str, Any]) -> int:
    return int(dt.datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp() * 1000)


class Archive:
    """An agent dir with session folders, and the ground truth of what was written."""

    def __init__(self, agent_dir: Path, seed: int = 1) -> None:
        self.agent = agent_dir
        self.sessions_root = agent_dir / "sessions"
        self.rng = random.Random(seed)
        self.writers: list[Writer] = []
        self.clock = 1_767_225_600_000  # 2026-01-01T00:00:00Z

    def folder(self, cwd: str) -> Path:
        trimmed = cwd.lstrip("/")
        return self.sessions_root / ("--" + trimmed.replace("/", "-") + "--")

    def new(self, cwd: str, *, parent: Writer | None = None, id_prefix: str | None = None) -> Writer:
        self.clock += self.rng.randint(60_000, 3_600_000)
        sid = f"{self.rng.getrandbits(32):08x}-0000-7000-8000-{self.rng.getrandbits(48):012x}"
        ts = iso(self.clock)
        header: dict[str, Any] = {"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": cwd}
        if parent is not None:
            header["parentSession"] = str(parent.path)
        path = self.folder(cwd) / f"{ts.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
        w = Writer(path, header, random.Random(self.rng.getrandbits(64)), self.clock, id_prefix=id_prefix)
        self.writers.append(w)
        return w

    def fork(self, source: Writer, at: str, *, cwd: str | None = None) -> Writer:
        """``/clone`` at ``at`` (or ``/fork`` before a user message): the path copied, ids and times kept."""
        child = self.new(cwd or source.header["cwd"], parent=source)
        parent: str | None = None
        for entry in source.path_to(at):
            if entry["type"] == "label":
                continue
            copy = dict(entry, parentId=parent)
            child.entries.append(copy)
            child.ids.add(copy["id"])
            if entry["id"] in source.origins:
                child.origins[entry["id"]] = source.origins[entry["id"]]
            parent = copy["id"]
        child.leaf = parent
        child.clock = max(child.clock, source.clock)
        return child

    def present(self) -> list[Writer]:
        return [w for w in self.writers if w.path.exists()]

    def truth(self, writers: list[Writer] | None = None) -> dict[str, Any]:
        """Totals over distinct origins among the files present (copied history once)."""
        seen: dict[int, Usage] = {}
        for w in writers if writers is not None else self.present():
            for u in w.origins.values():
                seen[u.origin] = u
        total = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0, "records": len(seen)}
        for u in seen.values():
            total["input"] += u.input
            total["output"] += u.output
            total["cacheRead"] += u.cache_read
            total["cacheWrite"] += u.cache_write
            total["cost"] += u.cost
        return total


def env_for(agent: Path, cache: Path, home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PITOOLS_CACHE_DIR": str(cache),
        "PATH": os.environ.get("PATH", ""),
    }


def private_pi_env(tmp_path: Path, monkeypatch: Any) -> dict[str, str]:
    """Point the environment pitools sees at ``tmp_path``: the agent dir ``agent``, the cache
    ``cache`` and the home ``home`` below it (:func:`env_for`), no session dir of the user's, and
    ``tmp_path`` as the working directory. Returns the variables set."""
    env = env_for(tmp_path / "agent", tmp_path / "cache", tmp_path / "home")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return env


def archive_in(tmp_path: Path, monkeypatch: Any, seed: int) -> Archive:
    """An empty archive under ``tmp_path`` with the environment pitools sees pointed at it
    (:func:`private_pi_env`), and a fixed width and time zone."""
    private_pi_env(tmp_path, monkeypatch)
    monkeypatch.setenv("PITOOLS_WIDTH", "140")
    monkeypatch.setenv("TZ", "UTC")
    return Archive(tmp_path / "agent", seed=seed)


def _settle(path: Path) -> None:
    """Date a written file 10 s back (order kept: every write is dated the same distance back),
    as a file Pi wrote a moment ago. A file written in the same clock tick as an index update
    starts is read again by the next update too (git's racy rule, pitools.ops.index.racy), which
    would blur the counts these tests check; the racy rule has tests of its own."""
    import os
    import time

    then = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(then, then))
