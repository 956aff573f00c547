"""The oracle's ``labels`` keys are ``String(targetId)``: booleans, numbers, objects and arrays too.

``EXPECTED`` is Pi 1.6.0's own output for ``SESSION``, recorded with
``node /work/shared/reference/oracle.mjs labels.jsonl`` (its ``labels`` member, copied as printed).
"""

from __future__ import annotations

from pathlib import Path

from pitools.core.parity import oracle_view

SESSION = """\
{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"label","id":"l1","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","targetId":"a1","label":"str"}
{"type":"label","id":"l2","parentId":"l1","timestamp":"2025-01-01T00:00:03.000Z","targetId":7,"label":"int"}
{"type":"label","id":"l3","parentId":"l2","timestamp":"2025-01-01T00:00:04.000Z","targetId":1.5,"label":"float"}
{"type":"label","id":"l4","parentId":"l3","timestamp":"2025-01-01T00:00:05.000Z","targetId":true,"label":"bool"}
{"type":"label","id":"l5","parentId":"l4","timestamp":"2025-01-01T00:00:06.000Z","targetId":null,"label":"null"}
{"type":"label","id":"l6","parentId":"l5","timestamp":"2025-01-01T00:00:07.000Z","label":"undef"}
{"type":"label","id":"l7","parentId":"l6","timestamp":"2025-01-01T00:00:08.000Z","targetId":{"a":1},"label":"obj"}
{"type":"label","id":"l8","parentId":"l7","timestamp":"2025-01-01T00:00:09.000Z","targetId":[1,null,"x"],"label":"arr"}
{"type":"label","id":"l9","parentId":"l8","timestamp":"2025-01-01T00:00:10.000Z","targetId":1e21,"label":"big"}
{"type":"label","id":"l10","parentId":"l9","timestamp":"2025-01-01T00:00:11.000Z","targetId":false,"label":"f"}
"""

EXPECTED = {
    "1,,x": {"label": "arr", "timestamp": "2025-01-01T00:00:09.000Z"},
    "1.5": {"label": "float", "timestamp": "2025-01-01T00:00:04.000Z"},
    "1e+21": {"label": "big", "timestamp": "2025-01-01T00:00:10.000Z"},
    "7": {"label": "int", "timestamp": "2025-01-01T00:00:03.000Z"},
    "[object Object]": {"label": "obj", "timestamp": "2025-01-01T00:00:08.000Z"},
    "a1": {"label": "str", "timestamp": "2025-01-01T00:00:02.000Z"},
    "false": {"label": "f", "timestamp": "2025-01-01T00:00:11.000Z"},
    "null": {"label": "null", "timestamp": "2025-01-01T00:00:06.000Z"},
    "true": {"label": "bool", "timestamp": "2025-01-01T00:00:05.000Z"},
    "undefined": {"label": "undef", "timestamp": "2025-01-01T00:00:07.000Z"},
}


def test_label_keys_are_js_strings(tmp_path: Path) -> None:
    session = tmp_path / "labels.jsonl"
    session.write_text(SESSION, encoding="utf-8")
    assert oracle_view(session)["labels"] == EXPECTED
