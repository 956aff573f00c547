"""The viewer's Markdown subset and its escaping, unit-tested under node (``markdown.test.mjs``):
each rule, hostile text staying text, random input making only the renderer's own markup. No
browser needed; skipped when node is absent."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests import support

SCRIPT = Path(__file__).with_name("markdown.test.mjs")


@pytest.mark.skipif(support.node() is None, reason="node is not installed")
def test_markdown_rules_under_node() -> None:
    node = support.node()
    assert node is not None
    done = subprocess.run([node, "--test", str(SCRIPT)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"^# pass (\d+)$", done.stdout, re.M)
    assert "# fail 0" in done.stdout and passed and int(passed.group(1)) >= 14, done.stdout[-2000:]
