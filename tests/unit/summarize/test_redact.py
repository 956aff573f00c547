"""A credential is hidden in every form an error message can carry it (issue 12)."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest

from pitools.summarize.redact import MASK, redact
from pitools.summarize.types import ModelSpec

SECRETS = ["plainvalue-0123", "crlf-key-0123\r\n", "tab key/0123\t", "ключ-0123-секрет"]


@pytest.mark.parametrize("secret", SECRETS)
def test_every_representation_is_masked(secret: str) -> None:
    forms = {
        "raw": secret,
        "repr": repr(secret),
        "bytes repr": f"Illegal header value {secret.encode()!r}",
        "json": json.dumps(secret),
        "json ascii": json.dumps(secret, ensure_ascii=True),
        "url": quote(secret, safe=""),
        "url plus": quote_plus(secret),
        "trimmed": secret.strip(),
    }
    for name, form in forms.items():
        out = redact(f"server said: {form} !", [secret])
        assert MASK in out, name
        assert "0123" not in out, (name, out)  # every secret above holds "0123"


def test_headers_from_commands_or_variables_are_secret_whatever_their_name() -> None:
    spec = ModelSpec(
        provider="p",
        model_id="m",
        api="openai-completions",
        headers={"X-Tenant": "tenant-value-1", "X-Plain": "visible"},
        secret_headers=("X-Tenant",),
    )
    assert "tenant-value-1" in spec.secrets()
    assert "visible" not in spec.secrets()
    assert "tenant-value-1" not in repr(spec) and "tenant-value-1" not in spec.model_dump_json()
    assert "visible" in repr(spec)
