"""The detectors: one positive example per kind, and the look-alikes that must stay quiet."""

from __future__ import annotations

import base64
import json

import orjson
import pytest

from pitools.core.secrets.detect import Detector, ExactValue
from pitools.core.secrets.patterns import PATTERNS, canonical_line
from pitools.core.secrets.redact import RedactOptions, Redactor
from pitools.core.secrets.scan import field_path, fingerprint, preview, scan_lines
from tests import support

R = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4cD6eF8gH0iJ2kL4mN6oP8qR0sT2uV4wX6yZ8"
HEX = "0123456789abcdef" * 8

POSITIVE = {
    "aws-access-key-id": "AKIAIOSFODNN7EXAMPLQ",
    "aws-secret-access-key": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github-token": "ghp_" + R[:36],
    "gitlab-token": "glpat-" + R[:20],
    "slack-token": "xoxb-12345678901-" + R[:24],
    "slack-webhook": "https://hooks.slack.com/services/T0000/B0000/" + R[:24],
    "stripe-key": "sk_live_" + R[:24],
    "twilio-api-key": "SK" + HEX[:32],
    "sendgrid-key": "SG." + R[:22] + "." + R[:43],
    "npm-token": "npm_" + R[:36],
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + R[:50],
    "azure-storage-key": "AccountKey=" + (R + R)[:86] + "==",
    "telegram-bot-token": "123456789:AA" + R[:33],
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + R[:43],
    "basic-auth": "postgres://admin:S3cr3tPassw0rd@db.internal:5432/app",
    "anthropic-key": "sk-ant-api03-" + R[:60],
    "openrouter-key": "sk-or-v1-" + HEX[:64],
    "openai-key": "sk-proj-" + R[:48],
    "deepseek-key": "sk-" + HEX[:32],
    "sk-api-key": "sk-" + R[:48],
    "google-api-key": "AIza" + R[:35],
    "google-oauth-token": "ya29." + R[:40],
    "huggingface-token": "hf_" + R[:34],
    "groq-key": "gsk_" + R[:52],
    "xai-key": "xai-" + R[:70],
    "cerebras-key": "csk-" + R[:48].lower(),
    "fireworks-key": "fw_" + R[:24],
    "perplexity-key": "pplx-" + R[:48],
    "nvidia-key": "nvapi-" + R[:64],
    "replicate-token": "r8_" + R[:37],
    "together-key": "tgp_v1_" + R[:40],
    "aws-bedrock-key": "ABSK" + R[:64],
    "secret-assignment": "DB_PASSWORD=Tr0ub4dor&3x",
}


def kinds(text: str, det: Detector | None = None) -> list[str]:
    return [h.kind for h in (det or Detector()).hits(text)]


def test_every_pattern_has_a_positive_example() -> None:
    assert {p.kind for p in PATTERNS} <= set(POSITIVE)


@pytest.mark.parametrize("kind", sorted(POSITIVE))
def test_positive(kind: str) -> None:
    assert kinds(f"before {POSITIVE[kind]} after") == [kind]


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b and sha256 " + HEX[:64],
        "uuid 0195f3a2-7c1e-7d4b-9a61-5b2e8c0d4f17 entry a1b2c3d4",
        "path /home/dev/projects/pi-session-tools/src/some_long_module_name_here.py",
        "integrity sha512-"
        + "Jz4TjWq3Qk0hLhTcb1mN8tUvR2xYz5aB7cD9eF1gH3iJ5kL7mN9oP1qR3sT5uV7wX9yZ1aB3cD5eF7gH9iJ1kL3mN==",
        "const token = getToken(); token: string; password = os.environ['DB_PASSWORD']",
        "api_key=settings.API_KEY secret: ${{ secrets.GITHUB_TOKEN }} PASSWORD=changeme TOKEN=<your-token>",
        "token_count = 12345678 and max_tokens: 4096",
        "https://user:${PASSWORD}@host/ and https://example.com:8080/path",
        "toolu_01A09q90qw90lq917835lq9 is a tool call id",
        "the words ghp_ and sk- and AKIA alone",
        "[REDACTED:github-token:1a2b3c4d] stays as it is",
        "camelCaseIdentifierThatIsVeryLongButHasNoDigitsAtAll and snake_case_identifier_with_1_digit_here",
        # Found in Pi's own bundled JavaScript and pitools' sources while tuning (all fixed):
        "normalizeHeaderValueForSigV4Request2 and _X509CertificateParserContext3 in minified code",
        'const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"',
        "{isOAuthToken:isOAuthToken2,native:1}",
        'X_AWS_EC2_METADATA_TOKEN="x-aws-ec2-metadata-token"',
        "maxTokens: 128000, max_tokens=max_tokens, DEFAULT_MAX_TOKENS = 16384",
        'ANTHROPIC_AUTH_TOKEN = "ANTHROPIC_AUTH_TOKEN"; parser.add_argument("--reserve-tokens")',
        'apiKey: "sk-ant-..." and token = this.settings?.token2',
        "png iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    ],
)
def test_quiet_on_look_alikes(text: str) -> None:
    assert kinds(text) == []


def test_base64_wrapped_binary_is_not_entropy() -> None:
    blob = base64.encodebytes(bytes(range(256)) * 3).decode()
    assert kinds("$ base64 logo.png\n" + blob) == []


def test_high_entropy_token() -> None:
    assert kinds("blob Xk9mQ2vL7pR4tW8yB3nF6hJ1dS5gA0zC here") == ["high-entropy"]
    assert kinds("blob Xk9mQ2vL7pR4tW8yB3nF6hJ1dS5gA0zC here", Detector(entropy=False)) == []


def test_secret_inside_base64_text() -> None:
    token = "ghp_" + R[:36]
    block = base64.b64encode(f"GITHUB_TOKEN={token}\nother=1\n".encode()).decode()
    hits = Detector().hits(f"output:\n{block}\n")
    assert [h.kind for h in hits] == ["base64"]
    assert [leaf.kind for leaf in hits[0].leaves()] == ["github-token"]


def test_exact_values_win_and_short_ones_are_ignored() -> None:
    det = Detector([ExactValue("given-value", "ghp_" + R[:36]), ExactValue("given-value", "abc")])
    assert kinds("x ghp_" + R[:36], det) == ["given-value"]
    assert kinds("abc abc", det) == []


def test_dict_key_naming_a_credential() -> None:
    det = Detector(entropy=False)
    assert det.key_value_hit("apiKey", "Zq8-plain-Value") is not None
    assert det.key_value_hit("apiKey", "placeholder") is None
    assert det.key_value_hit("model", "Zq8-plain-Value") is None


@pytest.mark.parametrize(
    "raw",
    [
        # \\u00XX escapes inside the token
        b'{"t":"gh\\u0070_' + R[:36].encode() + b'"}',
        # \\/ in a URL
        b'{"t":"https:\\/\\/admin:S3cr3tPassw0rd@db.internal\\/x"}',
    ],
)
def test_escaped_secrets_pass_the_line_gate_and_are_found(raw: bytes) -> None:
    det = Detector(entropy=False)
    assert det.line_may_hit(raw)
    assert len(list(scan_lines([raw + b"\n"], det, file="f"))) == 1
    assert canonical_line(raw) != raw


def test_exact_value_with_a_quote() -> None:
    value = 'pa"ss-w0rd-42'
    line = orjson.dumps({"type": "x", "text": f"use {value}"}) + b"\n"
    det = Detector([ExactValue("given-value", value)])
    assert det.line_may_hit(line)
    out = Redactor(det, RedactOptions(key=b"k"), file="f").redact_line(line, 1)
    assert value.encode() not in out and json.dumps(value)[1:-1].encode() not in out


def test_preview_and_fingerprint_do_not_show_the_secret() -> None:
    assert preview("github-token", "ghp_" + R[:36]) == "github-token ghp_… (40 chars)"
    assert preview("given-value", "hunter22") == "given-value hu… (8 chars)"
    fp = fingerprint("github-token", "ghp_" + R[:36])
    assert len(fp) == 32 and fp == fingerprint("github-token", "ghp_" + R[:36])
    assert fp != fingerprint("jwt", "ghp_" + R[:36])


def test_field_path() -> None:
    assert field_path(["message", "content", 2, "arguments", "command"]) == "message.content[2].arguments.command"
    assert field_path(["data", "with space"]) == 'data["with space"]'
    assert field_path(["data", "<key>"]) == "data.<key>"


def test_findings_in_every_place() -> None:
    token = "ghp_" + R[:36]
    entry = {
        "type": "custom",
        "id": "c1",
        "data": {token: 1, "nested": [{"deep": f"x {token}"}]},
        "label": token,
    }
    lines = [orjson.dumps(entry) + b"\n", b"not json " + token.encode() + b"\n"]
    found = list(scan_lines(lines, Detector(), file="f"))
    assert [(f.line, f.field, f.entry_id) for f in found] == [
        (1, "data.<key> (key)", "c1"),
        (1, "data.nested[0].deep", "c1"),
        (1, "label", "c1"),
        (2, "(line)", None),
    ]


def test_redaction_keeps_ids_consistent_when_an_id_is_a_secret() -> None:
    token = "ghp_" + R[:36]
    lines = [
        orjson.dumps({"type": "message", "id": token, "parentId": None}) + b"\n",
        orjson.dumps({"type": "message", "id": "b", "parentId": token}) + b"\n",
        b'{"type":"message","id":"c","parentId":"b"}\n',
    ]
    red = Redactor(Detector(), RedactOptions(key=b"k"), file="f")
    out = [json.loads(x) for x in red.redact_lines(lines)]
    assert out[0]["id"] == out[1]["parentId"] and out[0]["id"].startswith("[REDACTED:github-token:")
    assert list(red.redact_lines(lines))[2] is lines[2]


def test_redact_is_idempotent_and_keeps_line_endings() -> None:
    token = "sk-proj-" + R[:48]
    lines = [orjson.dumps({"type": "x", "text": token}) + b"\r\n", b'{"type":"y"}']
    red = Redactor(Detector(), RedactOptions(key=b"k"), file="f")
    once = list(red.redact_lines(lines))
    assert once[0].endswith(b"\r\n") and once[1] is lines[1]
    again = list(Redactor(Detector(), RedactOptions(key=b"k"), file="f").redact_lines(once))
    assert again == once


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 22])
def test_chunked_scan_equals_line_scan(chunk: int, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:

    from pitools.ops import scan as ops_scan

    planted = support.GOLDEN / "secrets-planted" / "session.jsonl"
    data = planted.read_bytes() + b"no newline at the end ghp_" + R[:36].encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(ops_scan, "_CHUNK", chunk)
    det = Detector([ExactValue("given-value", 'mistral"x' + R[:20])])
    by_line = [(f.line, f.field, f.kind) for f in scan_lines(data.splitlines(keepends=True), det, file="f")]
    by_chunk = [(f.line, f.field, f.kind) for f in ops_scan.scan_file(str(path), det)]
    assert by_chunk == by_line and len(by_line) >= 33


def test_json_text_inside_a_string_is_decoded_and_redacted_in_place() -> None:
    # A tool printed PHP-style JSON: slashes and letters escaped inside the (already decoded) string.
    printed = '{"url":"https:\\/\\/admin:S3cr3tPassw0rd@db.internal\\/x","k":"\\u0067hp_' + R[:36] + '"}'
    line = orjson.dumps({"type": "message", "id": "m", "text": printed}) + b"\n"
    det = Detector(entropy=False)
    assert det.line_may_hit(line)
    assert sorted(f.kind for f in scan_lines([line], det, file="f")) == ["basic-auth", "github-token"]
    out = Redactor(det, RedactOptions(key=b"k"), file="f").redact_line(line, 1)
    text = json.loads(out)["text"]
    assert "S3cr3tPassw0rd" not in text and R[:36] not in text
    assert text.startswith('{"url":"https:\\/\\/admin:[REDACTED:basic-auth:') and '"k":"[REDACTED:github-token:' in text
    assert list(scan_lines([out], det, file="f")) == []


def test_plain_re_fallback_finds_the_same() -> None:
    import subprocess
    import sys

    planted = support.GOLDEN / "secrets-planted" / "session.jsonl"
    code = (
        "import sys; sys.modules['re2'] = None\n"
        "from pitools.core.secrets.detect import Detector\n"
        "from pitools.ops.scan import scan_file\n"
        f"print(len(scan_file({str(planted)!r}, Detector())))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    from pitools.ops.scan import scan_file

    assert int(out) == len(scan_file(str(planted), Detector())) >= 30
