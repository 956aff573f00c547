"""Tree navigation recorded through Pi 1.6.0 (``scripts/pi_navigate.mjs``) for ``pitools navigate``.

Two kinds of golden data, both written by ``make golden`` (``scripts/record_golden.py``):

- ``golden/navigate/pi-navigate.json.xz``: Pi's own ``navigateTree`` run on a copy of a golden
  session for each case below (every edge shape of issue 24: target == from, a root user
  message, from an ancestor of the target, user and custom message targets, labels with and
  without a summary, a budget that cuts the branch, a branch with no message, context edits),
  with the entries Pi appended and its context at its new leaf, reloaded from disk.
- ``golden/navigated-*/``: sessions pitools itself navigated (``--summarize``, builtin and a
  local HTTP model). Like every golden session they get the oracle's recordings, so the
  conformance suite proves Pi loads them; ``pi.contexts.json`` holds Pi's context at the new
  leaf and at the landing position, read back from the file pitools wrote.
"""

from __future__ import annotations

import datetime as dt
import json
import lzma
import os
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests import support

GOLDEN = support.GOLDEN
NAVIGATE = GOLDEN / "navigate"
RECORDING = NAVIGATE / "pi-navigate.json.xz"
SCRIPT = support.ROOT / "scripts" / "pi_navigate.mjs"
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    from_id: str | None  # None: Pi's default leaf
    to: str
    summarize: bool = True
    label: str | None = None
    context_window: int = 200000


#: Hand-picked shapes; :func:`generated_cases` adds every leaf-to-leaf pair of a few sessions.
EDGE_CASES = [
    Case("same", "seed-running-example", None, "C1"),
    Case("root-user", "seed-running-example", None, "U1", label="restart"),
    Case("root-user-label-only", "seed-running-example", "A3", "U1", summarize=False, label="top"),
    Case("from-ancestor", "seed-running-example", "A2", "A3"),
    Case("from-ancestor-label", "seed-running-example", "A2", "A3", label="later"),
    Case("user-target", "seed-running-example", "A3", "U2B", label="tried-jwt"),
    Case("assistant-target", "seed-running-example", "A3", "A6"),
    Case("no-summary", "seed-running-example", "A3", "A6", summarize=False),
    Case("tiny-budget", "seed-running-example", None, "A3", context_window=16400),
    Case("budget-90pct", "seed-running-example", None, "A3", context_window=16400 - 8),
    Case("custom-target", "secrets-planted", None, "e000000d"),
    Case("custom-root-user", "secrets-planted", None, "e0000001"),
    Case("edits-on-branch", "gen-s0009_v3", None, "L2"),
    Case("many-summaries", "gen-s0047_v3", None, "L2", context_window=30000),
]

#: Sessions whose every non-default leaf is navigated to every custom-message and to the first
#: entry, besides the oracle's navigateToDefault.
GENERATED_FROM = ["gen-s0005_v3", "gen-s0047_v3", "gen-s0022_v3", "branches-compaction-tails"]


@dataclass(frozen=True)
class Applied:
    name: str
    source: str
    from_id: str | None
    to: str
    summarizer: str  # "builtin" or "http"
    label: str | None = None


APPLIED = [
    Applied("navigated-builtin-seed", "seed-running-example", "A3", "U2B", "builtin", "tried-jwt"),
    Applied("navigated-builtin-root", "seed-running-example", None, "U1", "builtin"),
    Applied("navigated-http-gen-s0047", "gen-s0047_v3", None, "L2", "http", "http-summary"),
]


def _load(case_source: str) -> Any:
    from pitools.core.session.load import load

    return load(str(GOLDEN / case_source / "session.jsonl"))


def _resolve(loaded: Any, ref: str | None) -> Any:
    return loaded.leaf(ref)


def generated_cases() -> list[Case]:
    """Leaf-to-target pairs of :data:`GENERATED_FROM`, the same list every time."""
    from pitools.core.js.access import entry_id, entry_type

    out: list[Case] = []
    for source in GENERATED_FROM:
        loaded = _load(source)
        index = loaded.index
        targets = [entry_id(e) for e in index.entries if entry_type(e) == "custom_message"][:3]
        targets.append(entry_id(index.entries[0]))
        for leaf in index.leaves():
            for to in targets:
                out.append(Case(f"{source}:{leaf}->{to}", source, leaf, to, label=None))
        # A branch with no message (only metadata between the leaf and the target's path).
        for leaf in index.leaves():
            e = index.get(leaf)
            if entry_type(e) not in ("message", "custom_message", "compaction", "branch_summary"):
                parent = e.get("parentId")
                if parent and index.get(parent) is not None and entry_type(index.get(parent)) == "message":
                    out.append(Case(f"{source}:{leaf}->{parent}:metadata-only", source, leaf, parent))
                    break
    return out


def all_cases() -> list[Case]:
    return EDGE_CASES + generated_cases()


def _node(args: list[str]) -> dict[str, Any]:
    env = dict(os.environ, TZ="UTC")
    proc = subprocess.run(["node", str(SCRIPT), *args], capture_output=True, env=env, timeout=120, check=False)
    if not proc.stdout:
        raise RuntimeError(f"pi_navigate.mjs failed: {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout)


def record_case(case: Case) -> dict[str, Any]:
    loaded = _load(case.source)
    from_id = _resolve(loaded, case.from_id)
    to = _resolve(loaded, case.to)
    args = [str(GOLDEN / case.source / "session.jsonl"), "--from", str(from_id), "--to", str(to)]
    args += ["--context-window", str(case.context_window)]
    if case.summarize:
        args.append("--summarize")
    if case.label is not None:
        args += ["--label", case.label]
    # --context-after: Pi's context at its new leaf, read back from the file it wrote.
    pi = _node([*args, "--context-after"])
    return {"case": asdict(case), "fromId": from_id, "toId": to, "pi": pi}


def record_all() -> None:
    """Write ``golden/navigate/pi-navigate.json.xz`` (needs node and PI_REF_DIR)."""
    NAVIGATE.mkdir(exist_ok=True)
    records = [record_case(c) for c in all_cases()]
    blob = json.dumps(records, ensure_ascii=False, sort_keys=True).encode()
    RECORDING.write_bytes(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))


def load_recording() -> list[dict[str, Any]]:
    return json.loads(support.recording_text(RECORDING))


# -- sessions pitools navigated -------------------------------------------------------------------


def _http_summarizer() -> Any:
    from pitools.summarize import ModelSpec, build_summarizer
    from tests.unit.summarize.summarize_fakes import FakeModelServer, Step

    server = FakeModelServer()
    server.start()
    text = "## Goal\nCanned branch summary from the local test model.\n\n## Next Steps\n1. Come back later."
    server.script(Step(text=text, usage={"prompt_tokens": 321, "completion_tokens": 21, "total_tokens": 342}))
    spec = ModelSpec(
        provider="local",
        model_id="golden-model",
        api="openai-completions",
        base_url=server.url + "/v1",
        context_window=200000,
        max_tokens=8192,
    )
    return server, build_summarizer(spec, max_retries=0)


def build_applied(case: Applied, out: Path) -> Any:
    """Navigate ``golden/<source>`` as ``case`` says with pitools and write ``out``."""
    from pitools import store
    from pitools.ops import navigate as nav_ops
    from pitools.ops.summarizing import SummarizeRequest
    from pitools.summarize import build_summarizer, builtin_spec

    if out.exists():
        out.unlink()
    src = str(GOLDEN / case.source / "session.jsonl")
    server = None
    if case.summarizer == "builtin":
        summarizer = build_summarizer(builtin_spec())
    else:
        server, summarizer = _http_summarizer()
    try:
        stamp = store.stamp(src)
        loaded = _load(case.source)
        index = APPLIED.index(case)
        setup = nav_ops.NavigateSetup(
            loaded, loaded.leaf(case.from_id), loaded.leaf(case.to), 200000, 16384, {}, None, [], src, stamp, True
        )
        request = SummarizeRequest(
            output=str(out),
            backup=False,
            use_config=False,
            new_session=False,
            now=NOW,
            entry_ids=(f"b5a00{index:03x}", f"1abe1{index:03x}"),
            summarizer=summarizer,
        )
        return nav_ops.navigate_apply(setup, request, summarize=True, label=case.label)
    finally:
        if server is not None:
            server.stop()


def write_applied() -> list[Path]:
    """Write every ``golden/navigated-*`` session; returns their folders."""
    folders = []
    for case in APPLIED:
        folder = GOLDEN / case.name
        folder.mkdir(exist_ok=True)
        tmp = folder / "session.jsonl.new"
        outcome = build_applied(case, tmp)
        shutil.move(str(tmp), folder / "session.jsonl")
        meta = {"newLeaf": outcome.leaf, "summaryId": outcome.entries[0]["id"], "landing": outcome.plan.new_leaf_id}
        (folder / "navigated.json").write_text(json.dumps(meta, sort_keys=True) + "\n")
        folders.append(folder)
    return folders


def record_applied_contexts(folder: Path) -> None:
    """Pi's context at the new leaf and at the landing position, read from the written file."""
    meta = json.loads((folder / "navigated.json").read_text())
    ids = [meta["newLeaf"], meta["summaryId"], "null" if meta["landing"] is None else meta["landing"]]
    out = _node([str(folder / "session.jsonl"), "--contexts", ",".join(ids)])
    (folder / "pi.contexts.json").write_text(json.dumps(out, ensure_ascii=False, sort_keys=True, indent=1) + "\n")
