#!/usr/bin/env python3
"""Regenerate docs/viewer.png: the viewer on a generated session, in headless Chromium.

The session is scripts/gen_big.py's ``chatty`` shape at 1.5 MB (seeded, so the same bytes each
time: tool calls, thinking, compactions, labels, a branch); the page is opened at an entry just
after a compaction so the picture shows entries in the context (``●``) and summarized away (``○``).

Usage: scripts/viewer_screenshot.py [--out docs/viewer.png] [--width 1400] [--height 860]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "viewer.png")
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--height", type=int, default=860)
    p.add_argument("--theme", choices=("light", "dark"), default="light")
    args = p.parse_args(argv)

    import gen_big

    from pitools.core.session.load import load
    from pitools.ops.viewer import viewer_chunks
    from tests.browser import CHROMIUM, Browser

    if CHROMIUM is None:
        print("viewer_screenshot: chromium is not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "session.jsonl"
        session.write_bytes(gen_big.generate(1.5, 3, "chatty"))
        loaded = load(session)
        page = Path(tmp) / "page.html"
        page.write_bytes(b"".join(viewer_chunks(loaded, None, use_config=False)))
        with Browser(width=args.width, height=args.height) as b:
            b.open(page.as_uri())
            b.eval(f"localStorage.setItem('pitools-theme', '{args.theme}')")
            b.open(page.as_uri() + "?shot")
            # An entry a few steps after the last compaction: some of the path is summarized away.
            b.eval(
                """(() => {
              const ids = window.pitoolsViewer.treeOrderIds(), kinds = window.pitoolsViewer.treeOrderKinds();
              const last = kinds.lastIndexOf('compaction');
              let at = last + 1, replies = 0;
              for (; at < ids.length; at++) if (kinds[at] === 'assistant' && ++replies === 3) break;
              window.pitoolsViewer.select(ids[Math.min(at, ids.length - 1)]);
              const main = document.getElementById('main');
              const comp = document.querySelector('#transcript article.compaction');
              if (comp) { comp.scrollIntoView({ block: 'start' }); main.scrollTop -= 260; }
            })()"""
            )
            b.eval("new Promise(r => requestAnimationFrame(() => setTimeout(r, 200)))")
            args.out.write_bytes(b.screenshot())
    print(f"viewer_screenshot: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
