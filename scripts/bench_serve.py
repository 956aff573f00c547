"""``pitools serve`` on a large session: peak memory of the server while clients fetch a
session's page (or its full data answer) at once, each measurement in a fresh process.

Usage: scripts/bench_serve.py [--size 40] [--shape compacted] [--clients 1,3]

The session comes from scripts/gen_big.py (cached in bench/data). Clients read the answer in
64 KB pieces and drop it, so the figure is the server's (the same process: ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import bench  # noqa: E402  (scripts/bench.py: generators)

#: Runs in a child: serve the folder, fetch ``route`` with ``n`` clients at once, print figures.
CHILD = r"""
import json, resource, sys, threading, time, urllib.request
from pitools.cli.serve_app import App, make_server
from pitools.ops.listing import list_sessions
folder, n, route = sys.argv[1], int(sys.argv[2]), sys.argv[3]
app = App(session_dir=folder)
srv = make_server(app, 0)
threading.Thread(target=srv.serve_forever, daemon=True).start()
sid = list_sessions(session_dir=folder, all_=True).to_json()["sessions"][0]["id"]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sizes = []
def fetch():
    req = urllib.request.Request(app.url(f"/session/{sid}{route}"))
    req.add_header("Cookie", f"{app.cookie}={app.token}")
    total = 0
    with opener.open(req, timeout=600) as resp:
        while chunk := resp.read(1 << 16):
            total += len(chunk)
    sizes.append(total)
started = time.monotonic()
threads = [threading.Thread(target=fetch) for _ in range(n)]
for t in threads: t.start()
for t in threads: t.join()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
srv.shutdown()
print(json.dumps({"clients": n, "route": route or "/", "answerMB": round(sizes[0] / 1e6, 1),
                  "rssBeforeMB": round(before / 1024), "peakMB": round(peak / 1024),
                  "seconds": round(time.monotonic() - started, 1)}))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=bench.DATA)
    p.add_argument("--size", default="40")
    p.add_argument("--shape", default="compacted")
    p.add_argument("--clients", default="1,3")
    args = p.parse_args(argv)
    session = bench.ensure_session(args.data, args.shape, args.size)
    with tempfile.TemporaryDirectory(prefix="pitools-bench-serve-") as tmp:
        (Path(tmp) / session.name).symlink_to(session.resolve())
        # The first listing of a folder builds its archive index (its memory would be counted
        # in the first measurement's peak): build it beforehand.
        listing = [sys.executable, "-m", "pitools", "ls", "--all", "--session-dir", tmp, "--format", "json"]
        subprocess.run(listing, capture_output=True, check=True)
        for route in ("", "/data"):
            for n in (int(c) for c in args.clients.split(",")):
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, tmp, str(n), route], capture_output=True, text=True, check=True
                )
                row = json.loads(out.stdout)
                print(json.dumps({"session": session.name, **row}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
