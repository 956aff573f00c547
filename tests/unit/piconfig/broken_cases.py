"""Broken configuration files, one at a time: Pi's answers are in pi_broken_files_answers.json.

``file`` names which file holds ``text``: ``settings`` (the agent folder's settings.json),
``project`` (``<project>/.pi/settings.json``, ``trusted`` saying whether Pi trusts the project),
``models`` (models.json) or ``auth`` (auth.json).
"""

from __future__ import annotations

from typing import Any

NOT_JSON = "{oops"
ZERO_MAX_TOKENS = '{"providers": {"x": {"baseUrl": "http://h", "models": [{"id": "m", "maxTokens": 0}]}}}'
BROKEN_CASES: list[dict[str, Any]] = [
    {"file": "settings", "text": NOT_JSON},
    {"file": "settings", "text": "[1]"},
    {"file": "settings", "text": "3"},
    {"file": "settings", "text": ""},
    {"file": "settings", "text": '{"unknownKey": 1, "defaultModel": "from-agent"}'},
    {"file": "project", "text": NOT_JSON, "trusted": True},
    {"file": "project", "text": '{"defaultModel": "from-project"}', "trusted": True},
    {"file": "project", "text": NOT_JSON, "trusted": False},
    {"file": "project", "text": '{"defaultModel": "from-project"}', "trusted": False},
    {"file": "models", "text": NOT_JSON},
    {"file": "models", "text": "[1]"},
    {"file": "models", "text": '{"providers": 5}'},
    {"file": "models", "text": '{"providers": {}, "unknownKey": 1}'},
    {
        "file": "models",
        "text": '{"providers": {"x": {"baseUrl": "http://h", "models": [{"id": "m", "maxTokens": 0}]}}}',
    },
    {"file": "models", "text": '// a comment\n{"providers": {},}'},
    {"file": "auth", "text": NOT_JSON},
    {"file": "auth", "text": "[1]"},
    {"file": "auth", "text": "3"},
    {"file": "auth", "text": '{"openai": "x"}'},
    {"file": "auth", "text": '{"openai": {"type": "api_key", "key": 5}}'},
]
