#!/usr/bin/env python3
"""Write the planted-secrets golden sessions (deterministic; the secrets are fake but well-formed).

* ``golden/secrets-planted/session.jsonl``: a Pi v3 session with secrets of 25+ kinds planted in
  every kind of field: user text, assistant text, thinking, tool-call arguments (and a JSON file
  inside them), tool results (plain and base64), bash output, compaction and branch summaries,
  custom entries' data, custom messages, a label, the session name, the header, an object key,
  a line Pi skips; some written with JSON escapes (``\\u00XX``, ``\\/``, ``\\"``) that split them.
  ``planted.json`` beside it lists every planted value with its kind and the ``--value`` list.
* ``golden/secrets-planted-redacted/session.jsonl``: ``pitools redact`` of the first with a fixed
  key, recorded through Pi 1.6.0 like every golden case (``make golden``);
  ``golden/secrets-planted-stripped``: the same with ``--paths --strip-images --strip-thinking``.

Usage: scripts/make_secrets_corpus.py   (then record both cases with scripts/record_golden.py)
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "golden" / "secrets-planted"
REDACTED = ROOT / "golden" / "secrets-planted-redacted"
#: Redacted with --paths --strip-images --strip-thinking too (HOME=/home/planted, USER=planted).
STRIPPED = ROOT / "golden" / "secrets-planted-stripped"
#: The fixed key the redacted case is made with (any key works; fixed so the bytes are stable).
KEY = "golden-secrets-key"

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
UPPER_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def planted_values() -> dict[str, str]:
    """name -> fake secret, all from one seeded generator."""
    r = random.Random(17)

    def pick(alphabet: str, n: int) -> str:
        while True:
            s = "".join(r.choice(alphabet) for _ in range(n))
            # Mixed classes, so each token also looks random to the entropy check.
            mixed = any(c.isupper() for c in alphabet) and any(c.islower() for c in alphabet)
            if (
                mixed
                and n >= 8
                and not (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s))
            ):
                continue
            return s

    def jwt() -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
        body = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Planted","iat":1516239022}').rstrip(b"=").decode()
        return f"{head}.{body}.{pick(URLSAFE, 43)}"

    pem_body = "\n".join(pick(B64, 64) for _ in range(4))
    return {
        "aws-access-key-id": "AKIA" + pick(UPPER_B32, 16),
        "aws-secret-access-key": pick(B64, 40),
        "github-token": "ghp_" + pick(ALNUM, 36),
        "github-pat": "github_pat_" + pick(ALNUM, 22) + "_" + pick(ALNUM, 59),
        "gitlab-token": "glpat-" + pick(URLSAFE, 20),
        "slack-token": "xoxb-" + "".join(r.choice("0123456789") for _ in range(11)) + "-" + pick(ALNUM, 24),
        "stripe-key": "sk_live_" + pick(ALNUM, 24),
        "twilio-api-key": "SK" + pick(HEX, 32),
        "private-key": f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----",
        "jwt": jwt(),
        "basic-auth": "Pl4nted-" + pick(ALNUM, 12),
        "openai-key": "sk-proj-" + pick(URLSAFE, 48),
        "anthropic-key": "sk-ant-api03-" + pick(URLSAFE, 93) + "AA",
        "google-api-key": "AIza" + pick(URLSAFE, 35),
        "huggingface-token": "hf_" + pick(ALNUM, 34),
        "groq-key": "gsk_" + pick(ALNUM, 52),
        "xai-key": "xai-" + pick(ALNUM, 80),
        "openrouter-key": "sk-or-v1-" + pick(HEX, 64),
        "deepseek-key": "sk-" + pick(HEX, 32),
        "cerebras-key": "csk-" + pick("abcdefghijklmnopqrstuvwxyz0123456789", 48),
        "npm-token": "npm_" + pick(ALNUM, 36),
        "sendgrid-key": "SG." + pick(URLSAFE, 22) + "." + pick(URLSAFE, 43),
        "high-entropy": pick(ALNUM, 40),
        "secret-assignment": "Hunter2-" + pick(ALNUM, 10) + "!",
        "nvidia-key": "nvapi-" + pick(URLSAFE, 64),
        "fireworks-key": "fw_" + pick(ALNUM, 24),
        "perplexity-key": "pplx-" + pick(ALNUM, 48),
        # Found only because they are given (--value / --values-file): no recognisable format.
        "given-value": 'mistral"' + pick(ALNUM, 24),
        "given-value-2": pick(ALNUM, 32),
        # In the key of an object (custom entry data).
        "key-in-object-key": "ghp_" + pick(ALNUM, 36),
        # Inside base64 tool output.
        "in-base64": "ghs_" + pick(ALNUM, 36),
        # In a line Pi skips (not JSON).
        "in-broken-line": "gho_" + pick(ALNUM, 36),
    }


class Builder:
    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.n = 0
        self.ms = 1772359200000

    def ts(self) -> str:
        self.ms += 61_000
        import datetime as dt

        return dt.datetime.fromtimestamp(self.ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def new_id(self) -> str:
        self.n += 1
        return f"e{self.n:07x}"

    def add(self, entry: dict[str, Any], raw: bytes | None = None) -> str:
        self.lines.append((raw if raw is not None else orjson.dumps(entry)) + b"\n")
        return str(entry.get("id"))

    def message(self, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        message.setdefault("timestamp", self.ms)
        return {"type": "message", "id": self.new_id(), "parentId": parent, "timestamp": self.ts(), "message": message}


USAGE = {
    "input": 100,
    "output": 50,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 150,
    "cost": {"input": 0.0003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00105},
}


def assistant(content: list[dict[str, Any]], stop: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": USAGE,
        "stopReason": stop,
    }


def escape_split(raw: bytes, secret: str, how: str) -> bytes:
    """``raw`` with ``secret``'s JSON form rewritten using escapes JSON.stringify never emits."""
    plain = orjson.dumps(secret)[1:-1]
    assert plain in raw, how
    if how == "unicode":  # every 5th character as \\u00XX
        chars = [f"\\u{ord(c):04x}" if i % 5 == 2 else c for i, c in enumerate(secret)]
        return raw.replace(plain, "".join(chars).encode())
    raise ValueError(how)


def build(v: dict[str, str]) -> bytes:
    b = Builder()
    header = {
        "type": "session",
        "version": 3,
        "id": "019c21b5-e1c5-7000-8000-0000000000aa",
        "timestamp": b.ts(),
        "cwd": "/home/planted/project",
        # The header: a parent-session path with a token in it.
        "parentSession": f"/home/planted/.pi/sessions/{v['huggingface-token']}.jsonl",
    }
    b.add(header)
    u1 = b.add(
        b.message(
            None,
            {
                "role": "user",
                "content": f"Deploy with key {v['aws-access-key-id']} and secret "
                f"aws_secret_access_key={v['aws-secret-access-key']}",
            },
        )
    )
    # Assistant: thinking (with a signature), text, and tool calls.
    a1_entry = b.message(
        u1,
        assistant(
            [
                {
                    "type": "thinking",
                    "thinking": f"The user pasted {v['github-token']}; I should not repeat it.",
                    "thinkingSignature": "EqQBCkYIBxgCKkB" + "A" * 40 + "signature",
                },
                {"type": "text", "text": f"I'll use the OpenAI key {v['openai-key']} for the test."},
                {
                    "type": "toolCall",
                    "id": "toolu_01",
                    "name": "bash",
                    "arguments": {
                        "command": f"curl -H 'Authorization: Bearer {v['anthropic-key']}' https://api.example"
                    },
                },
                {
                    "type": "toolCall",
                    "id": "toolu_02",
                    "name": "write",
                    "arguments": {
                        "path": "config.json",
                        # A JSON file inside the arguments: its quotes become \" in the line.
                        "content": json.dumps({"google": v["google-api-key"], "stripe": v["stripe-key"]}),
                    },
                },
            ],
            "toolUse",
        ),
    )
    a1 = b.add(a1_entry)
    r1 = b.add(
        b.message(
            a1,
            {
                "role": "toolResult",
                "toolCallId": "toolu_01",
                "toolName": "bash",
                "content": [
                    {"type": "text", "text": f"export GROQ_API_KEY={v['groq-key']}\nexport XAI={v['xai-key']}"}
                ],
                "isError": False,
            },
        )
    )
    env_file = f"PASSWORD={v['secret-assignment']}\nSENDGRID={v['sendgrid-key']}\nIMAGE_ID=placeholder\n"
    b64_text = base64.b64encode(f"token: {v['in-base64']}\nuser: bob\n".encode()).decode()
    wrapped = "\n".join(b64_text[i : i + 76] for i in range(0, len(b64_text), 76))
    r2 = b.add(
        b.message(
            r1,
            {
                "role": "toolResult",
                "toolCallId": "toolu_02",
                "toolName": "read",
                "content": [
                    {"type": "text", "text": env_file},
                    {"type": "text", "text": f"$ base64 secrets.txt\n{wrapped}\n"},
                    {
                        "type": "image",
                        "data": base64.b64encode(bytes(range(256)) * 4).decode(),
                        "mimeType": "image/png",
                    },
                ],
                "isError": False,
            },
        )
    )
    # Split across escapes: \\u00XX inside a Slack token, \\/ in a basic-auth URL, \\" in a given value.
    a2_entry = b.message(
        r2,
        assistant(
            [
                {"type": "text", "text": f"Slack: {v['slack-token']}"},
                {"type": "text", "text": f"Repo: https://deploy:{v['basic-auth']}@git.example.com/team/repo.git"},
                {"type": "text", "text": f"Mistral key given by the user: {v['given-value']}"},
            ]
        ),
    )
    raw = orjson.dumps(a2_entry)
    raw = escape_split(raw, v["slack-token"], "unicode")
    raw = raw.replace(b"https://deploy", b"https:\\/\\/deploy")
    a2 = b.add(a2_entry, raw)
    bash = b.add(
        b.message(
            a2,
            {
                "role": "bashExecution",
                "command": "cat ~/.ssh/id_rsa",
                "output": v["private-key"] + "\n",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            },
        )
    )
    u2 = b.add(b.message(bash, {"role": "user", "content": [{"type": "text", "text": f"JWT: {v['jwt']}"}]}))
    a3 = b.add(b.message(u2, assistant([{"type": "text", "text": f"Twilio {v['twilio-api-key']} noted."}])))
    comp = b.add(
        {
            "type": "compaction",
            "id": b.new_id(),
            "parentId": a3,
            "timestamp": b.ts(),
            "summary": f"## Goal\nDeploy. Tokens seen: {v['gitlab-token']} and {v['openrouter-key']}.",
            "firstKeptEntryId": u2,
            "tokensBefore": 5000,
            "details": {"readFiles": [".env"], "modifiedFiles": [], "note": f"npm {v['npm-token']}"},
        }
    )
    u3 = b.add(b.message(comp, {"role": "user", "content": f"Also {v['deepseek-key']} and {v['cerebras-key']}"}))
    a4 = b.add(b.message(u3, assistant([{"type": "text", "text": f"Random blob {v['high-entropy']} stored."}])))
    # Custom entry data (secret in a value and in a key), custom message, label, session name.
    b.add(
        {
            "type": "custom",
            "id": b.new_id(),
            "parentId": a4,
            "timestamp": b.ts(),
            "customType": "planted.state",
            "data": {"apiKey": v["given-value-2"], v["key-in-object-key"]: 1, "nvidia": v["nvidia-key"]},
        }
    )
    cm = b.add(
        {
            "type": "custom_message",
            "id": b.new_id(),
            "parentId": a4,
            "timestamp": b.ts(),
            "customType": "reminder",
            "content": [{"type": "text", "text": f"fireworks {v['fireworks-key']}"}],
            "display": True,
        }
    )
    b.add(
        {
            "type": "label",
            "id": b.new_id(),
            "parentId": cm,
            "timestamp": b.ts(),
            "targetId": u1,
            "label": f"key {v['github-pat']}",
        }
    )
    b.lines.append(f'{{"type":"message","broken": "{v["in-broken-line"]}"\n'.encode())
    tip1 = b.add(
        {
            "type": "session_info",
            "id": b.new_id(),
            "parentId": cm,
            "timestamp": b.ts(),
            "name": f"deploy {v['perplexity-key']}",
        }
    )
    # A second branch from u3, ending with a branch summary.
    bs = b.add(
        {
            "type": "branch_summary",
            "id": b.new_id(),
            "parentId": u3,
            "timestamp": b.ts(),
            "fromId": tip1,
            "summary": f"Explored another branch; it used {v['github-token']} again.",
        }
    )
    b.add(b.message(bs, assistant([{"type": "text", "text": "Back on the main task."}])))
    return b"".join(b.lines)


def main() -> int:
    values = planted_values()
    CASE.mkdir(parents=True, exist_ok=True)
    (CASE / "session.jsonl").write_bytes(build(values))
    given = [values["given-value"], values["given-value-2"]]
    (CASE / "planted.json").write_text(json.dumps({"values": values, "given": given}, indent=2) + "\n")
    REDACTED.mkdir(parents=True, exist_ok=True)
    out = REDACTED / "session.jsonl"
    out.unlink(missing_ok=True)
    values_file = CASE / "given-values.txt"
    values_file.write_text("".join(g + "\n" for g in given))
    cmd = [sys.executable, "-m", "pitools", "redact", str(CASE / "session.jsonl"), "-o", str(out)]
    cmd += ["--key", KEY, "--values-file", str(values_file), "--no-pi-keys"]
    subprocess.run(cmd, check=True, cwd=ROOT)
    STRIPPED.mkdir(parents=True, exist_ok=True)
    stripped = STRIPPED / "session.jsonl"
    stripped.unlink(missing_ok=True)
    cmd[6] = str(stripped)
    cmd += ["--paths", "--strip-images", "--strip-thinking"]
    env = {**os.environ, "HOME": "/home/planted", "USER": "planted"}
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
