"""Headless Chromium for the viewer tests, driven over the DevTools protocol on a pipe.

One browser serves many page loads (a launch costs seconds on a loaded machine); the protocol
runs over ``--remote-debugging-pipe`` (fds 3 and 4, NUL-terminated JSON), so no port is opened
and nothing but the standard library is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


class BrowserError(RuntimeError):
    pass


class Browser:
    """``with Browser() as b: b.open(url); b.eval("js")``."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        if CHROMIUM is None:
            raise BrowserError("chromium is not installed")
        self.profile = tempfile.mkdtemp(prefix="pitools-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        # The protocol's fixed descriptors in the child (dup2 after fork; close_fds would close them).
        def fds() -> None:
            for src, dst in ((to_child_r, 3), (from_child_w, 4)):
                if src == dst:
                    os.set_inheritable(dst, True)  # pipe() made it close-on-exec
                else:
                    os.dup2(src, dst)

        argv = [CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        argv += ["--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=fds, close_fds=False
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- protocol ---------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("timed out waiting for Chromium")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise BrowserError("Chromium closed the pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = False, timeout: float = 60
    ) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)
            del self._events[:-200]

    # -- pages ------------------------------------------------------------------------------
    def eval(self, expression: str, timeout: float = 60) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(
        self, url: str, *, ready: str = "document.documentElement.dataset.ready === 'true'", timeout: float = 60
    ) -> None:
        """Load ``url`` (a fresh document) and wait until ``ready`` holds in it."""
        self.call("Page.navigate", {"url": "about:blank"}, session=True)
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for(ready, timeout=timeout)

    def wait_for(self, condition: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.eval(f"!!({condition})"):
                    return
            except BrowserError:
                pass
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {condition}")
            time.sleep(0.05)

    def screenshot(self) -> bytes:
        import base64

        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"])

    def state(self) -> dict[str, Any]:
        """What the acceptance contract reads from a viewer page."""
        return self.eval(STATE_JS)  # type: ignore[no-any-return]


STATE_JS = """(async () => {
  const attr = (sel, a) => Array.from(document.querySelectorAll(sel), el => el.getAttribute(a));
  const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  // The transcript draws the end of the path first: ask for the earlier entries until all are there.
  for (let i = 0; i < 100000 && document.getElementById('earlier'); i++) document.getElementById('earlier').click();
  const total = document.getElementById('ctx-total');
  const plan = document.getElementById('ctx-plan');
  const selected = attr('#tree .row.selected', 'data-tree-id');
  const visibleRows = window.pitoolsViewer ? window.pitoolsViewer.rowIds().length : null;
  // The tree is virtual (only the rows in view are in the DOM): under the "All" filter, scroll
  // through it and collect every row drawn, then put the filter and the scroll back.
  const tree = document.getElementById('tree');
  const before = document.querySelector('button.filter.active');
  const top = tree.scrollTop;
  document.querySelector('button.filter[data-filter="all"]').click();
  const seen = new Set(), ids = [];
  tree.scrollTop = 0;
  await frame();
  for (let i = 0; i < 1000000; i++) {
    for (const el of tree.querySelectorAll('[data-tree-id]')) {
      if (!seen.has(el.dataset.pos)) { seen.add(el.dataset.pos); ids.push(el.getAttribute('data-tree-id')); }
    }
    if (tree.scrollTop + tree.clientHeight >= tree.scrollHeight - 1) break;
    tree.scrollTop = tree.scrollTop + tree.clientHeight;
    await frame();
  }
  const rowModel = window.pitoolsViewer ? window.pitoolsViewer.rowIds() : null;
  if (before) before.click();
  tree.scrollTop = top;
  await frame();
  return {
    tree: ids,
    rowModel: rowModel,
    domRows: tree.querySelectorAll('[data-tree-id]').length,
    transcript: attr('#transcript [data-entry-id]', 'data-entry-id'),
    inContext: attr('#transcript [data-in-context="true"]', 'data-entry-id'),
    tokens: total ? Number(total.dataset.tokens) : null,
    exact: total ? total.dataset.exact === 'true' : null,
    firstKept: plan ? plan.dataset.firstKept : null,
    selected: selected,
    visibleRows: visibleRows,
    text: document.getElementById('transcript').innerText,
    scripts: document.scripts.length,
  };
})()"""
