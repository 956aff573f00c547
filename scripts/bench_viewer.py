"""The HTML viewer on large sessions: export time, CPU and peak memory, page size, and how long
Chromium takes until the transcript shows (``make bench`` runs it; results in bench/).

Sessions come from scripts/gen_big.py (the same generators as scripts/bench.py): the 100 MB
``chatty`` shape (57,000 entries: the issue's 50,000-entry target), the 100 MB ``compacted`` shape
(34,000 longer entries) and the 100 MB ``branches`` shape. Each export runs ``--reps`` times; the
browser opens the page ``--reps`` times with a fresh document each time. "Transcript shows" is
the time from navigation until the transcript's last entry has its body drawn (the tree is
built after it); "select" is the page's own time (script + layout) to select the neighbouring
row (ArrowUp) and an entry in the middle of the tree (another branch, far away).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import bench  # noqa: E402  (scripts/bench.py: generators, process timing)

#: The transcript has drawn the body of at least one entry (the tree comes after it).
SHOWN = (
    "document.documentElement.dataset.transcriptMs !== undefined && "
    "document.querySelector('#transcript article[data-filled]') !== null"
)
READY = "document.documentElement.dataset.ready === 'true'"

#: Script + layout time of one selection, measured in the page (milliseconds).
SELECT_JS = """(() => {
  const t = performance.now();
  %s;
  void document.getElementById('transcript').offsetHeight;
  void document.getElementById('tree').offsetHeight;
  return performance.now() - t;
})()"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=bench.DATA)
    p.add_argument("--size", default="100")
    p.add_argument("--shapes", default="chatty,compacted,branches")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "viewer-results.json")
    args = p.parse_args(argv)
    from tests.browser import CHROMIUM, Browser

    pit = bench.pitools_argv()
    results: dict[str, Any] = {"load": bench.load_average(), "sessions": []}
    for shape in args.shapes.split(","):
        session = bench.ensure_session(args.data, shape, args.size)
        nbytes = session.stat().st_size
        with tempfile.TemporaryDirectory() as tmp:
            runs = []
            page = Path(tmp) / "page.html"
            for _ in range(args.reps):
                page.unlink(missing_ok=True)
                sample, tail = bench.run_once([*pit, "export", str(session), "--format", "html", "-o", str(page)])
                if sample.rc != 0:
                    raise SystemExit(f"export failed: {tail.decode(errors='replace')[-300:]}")
                runs.append(sample)
            row: dict[str, Any] = {
                "shape": shape,
                "bytes": nbytes,
                "pageBytes": page.stat().st_size,
                "exportSeconds": statistics.median(s.wall for s in runs),
                "exportCpuSeconds": statistics.median(s.cpu for s in runs),
                "exportPeakRssBytes": max(s.maxrss for s in runs),
            }
            row["rssPerFileByte"] = row["exportPeakRssBytes"] / nbytes
            if CHROMIUM is not None:
                shows, in_page, ready, frame = [], [], [], []
                with Browser() as b:
                    for n in range(args.reps):
                        start = time.perf_counter()
                        b.call("Page.navigate", {"url": "about:blank"}, session=True)
                        b.call("Page.navigate", {"url": f"{page.as_uri()}?n={n}"}, session=True, timeout=600)
                        b.wait_for(SHOWN, timeout=600)
                        shows.append(time.perf_counter() - start)
                        b.wait_for(READY, timeout=600)
                        ready.append(time.perf_counter() - start)
                        in_page.append(b.eval("Number(document.documentElement.dataset.transcriptMs)") / 1000)
                        frame.append(
                            b.eval("Number(document.documentElement.dataset.transcriptFrameMs || 'NaN')") / 1000
                        )
                    row["entries"] = b.eval("window.pitoolsViewer.treeOrderIds().length")
                    row["treeRowsInDom"] = b.eval("document.querySelectorAll('#tree .row').length")
                    row["transcriptEntries"] = b.eval("document.querySelectorAll('#transcript article').length")
                    row["jsHeapBytes"] = b.eval("performance.memory ? performance.memory.usedJSHeapSize : null")
                    up = [b.eval(SELECT_JS % "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp'}))")]
                    up += [b.eval(SELECT_JS % "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp'}))")]
                    far = []
                    for frac in (0.5, 0.25, 0.75):
                        ids = "window.pitoolsViewer.treeOrderIds()"
                        target = f"{ids}[Math.floor({ids}.length * {frac})]"
                        far.append(b.eval(SELECT_JS % f"window.pitoolsViewer.select({target})"))
                    row["selectNeighbourMs"] = statistics.median(up)
                    row["selectFarMs"] = statistics.median(far)
                row["chromiumShowsTranscriptSeconds"] = statistics.median(shows)
                row["chromiumTreeReadySeconds"] = statistics.median(ready)
                row["chromiumScriptTranscriptSeconds"] = statistics.median(in_page)
                row["chromiumTranscriptFrameSeconds"] = statistics.median(frame)
            results["sessions"].append(row)
            print(f"bench_viewer: {shape}: {json.dumps(row)}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    return 0


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"HTML viewer (load average {results['load']}; target: export peak RSS ≤ 3× the file)",
        "",
        "| session | entries | page | export wall / CPU | export peak RSS (× file) "
        "| Chromium: transcript shows / tree ready | select neighbour / far entry |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results["sessions"]:
        lines.append(
            f"| {r['shape']} {r['bytes'] / 1e6:.0f} MB | {r.get('entries', '—')} | {r['pageBytes'] / 1e6:.0f} MB "
            f"| {r['exportSeconds']:.1f} s / {r['exportCpuSeconds']:.1f} s "
            f"| {r['exportPeakRssBytes'] / 1e6:.0f} MB ({r['rssPerFileByte']:.2f}×) "
            f"| {r.get('chromiumShowsTranscriptSeconds', float('nan')):.1f} s / "
            f"{r.get('chromiumTreeReadySeconds', float('nan')):.1f} s "
            f"| {r.get('selectNeighbourMs', float('nan')):.0f} ms / {r.get('selectFarMs', float('nan')):.0f} ms |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
