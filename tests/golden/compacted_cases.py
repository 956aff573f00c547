"""Sessions compacted by pitools itself, kept in golden/ so Pi's view of them is recorded.

``make golden`` writes each case with :func:`build` and then records Pi's results on it like
any other golden session; the conformance suite therefore checks that Pi 1.6.0 loads the
compaction entry pitools appended and builds the same context from it. The tests also rebuild
every case and compare bytes, so the committed files are what pitools writes today.
"""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path

from pitools.ops.compaction import apply_compaction, plan_compact
from pitools.ops.summarizing import SummarizeRequest
from tests import support

GOLDEN = support.GOLDEN
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    leaf: str | None
    keep_recent_tokens: int
    summarizer: str  # "builtin" or "http"
    instructions: str | None = None


CASES = [
    Case("compacted-builtin-gen-s0001", "gen-s0001_v3", None, 2000, "builtin"),
    Case("compacted-builtin-seed-a3", "seed-running-example", "A3", 5, "builtin", "keep the auth details"),
    Case("compacted-builtin-recovery", "recovery-omission", None, 300, "builtin"),
    Case("compacted-http-gen-s0003", "gen-s0003_v3", None, 2000, "http"),
    Case("compacted-http-gen-s0007", "gen-s0007_v3", None, 300, "http"),
]


def _http_summarizer():  # type: ignore[no-untyped-def]
    from pitools.summarize import ModelSpec, build_summarizer
    from tests.unit.summarize.summarize_fakes import FakeModelServer, Step

    server = FakeModelServer()
    server.start()
    text = "## Goal\nCanned summary from the local test model.\n\n## Next Steps\n1. Continue."
    usage = {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}
    server.script(*[Step(text=text, usage=usage) for _ in range(4)])
    spec = ModelSpec(
        provider="local",
        model_id="golden-model",
        api="openai-completions",
        base_url=server.url + "/v1",
        context_window=128000,
        max_tokens=8192,
    )
    return server, build_summarizer(spec, max_retries=0)


def build(case: Case, out: Path) -> None:
    """Compact ``golden/<source>`` as ``case`` says and write the result to ``out``."""
    if out.exists():
        out.unlink()
    server = None
    if case.summarizer == "builtin":
        from pitools.summarize import build_summarizer, builtin_spec

        summarizer = build_summarizer(builtin_spec())
    else:
        server, summarizer = _http_summarizer()
    try:
        source = str(GOLDEN / case.source / "session.jsonl")
        planning = plan_compact(
            source, case.leaf, keep_recent_tokens=case.keep_recent_tokens, use_config=False, for_apply=True
        )
        request = SummarizeRequest(
            instructions=case.instructions,
            output=str(out),
            new_session=False,  # the source's lines, header included, plus the compaction
            now=NOW,
            entry_ids=(f"c0ffee{CASES.index(case):02x}",),
            summarizer=summarizer,
        )
        apply_compaction(planning, request)
    finally:
        if server is not None:
            server.stop()


def write_all() -> None:
    for case in CASES:
        folder = GOLDEN / case.name
        folder.mkdir(exist_ok=True)
        tmp = folder / "session.jsonl.new"
        build(case, tmp)
        shutil.move(str(tmp), folder / "session.jsonl")
