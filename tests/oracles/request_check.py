"""The request check's walks as they were before they were made lean: kept only as test oracles
(``tests/golden/test_request_check_oracle.py`` compares the production code against them on
every golden session, pi-ai's recorded bodies and mutated copies of the sessions).

``_images`` visited every object of the body with one ``access.get`` call per read and built a
field path for every node, as ``_lone_surrogate_at`` did for every value of a tool call's
arguments; the body's size was measured on the whole ``JSON.stringify`` text, decoded and
encoded again. Production code lives in ``pitools/core/request/check.py`` and
``pitools/core/js/json/encode.py`` (``js_stringify_size``); nothing in ``pitools/`` imports this
module.
"""

from __future__ import annotations

from typing import Any

from pitools.core.js.access import get
from pitools.core.js.json.encode import js_stringify
from pitools.core.js.value import UNDEFINED
from pitools.core.request.sanitize_unicode import sanitize_surrogates


def body_size(payload: Any) -> int:
    """The UTF-8 byte length of ``JSON.stringify(payload)``, measured on the whole text."""
    return len((js_stringify(payload) or "").encode("utf-8", "surrogatepass"))


def images(api: Any, payload: dict[str, Any]) -> list[tuple[int, str, Any, Any]]:
    """(item index, path of the data, declared type, base64 data) of every inline image in the body."""
    key = {"openai-responses": "input", "google-generative-ai": "contents"}.get(str(api), "messages")
    found: list[tuple[int, str, Any, Any]] = []
    for i, item in enumerate(payload.get(key) or []):
        stack: list[tuple[Any, str]] = [(item, f"{key}.{i}")]
        while stack:
            node, where = stack.pop()
            if isinstance(node, list):
                stack.extend(
                    (child, f"{where}.{k}")
                    for k, child in reversed(list(enumerate(node)))
                    if isinstance(child, (dict, list))
                )
                continue
            if not isinstance(node, dict):
                continue
            source = node.get("source")
            if node.get("type") == "image" and get(source, "type") == "base64":
                found.append((i, f"{where}.source.data", get(source, "media_type"), get(source, "data")))
                continue
            inline = node.get("inlineData")
            if isinstance(inline, dict):
                found.append((i, f"{where}.inlineData.data", inline.get("mimeType"), inline.get("data", UNDEFINED)))
                continue
            url = node.get("image_url")
            if url is not None:
                url_path = f"{where}.image_url"
                if isinstance(url, dict):
                    url, url_path = url.get("url"), f"{url_path}.url"
                if type(url) is str and url.startswith("data:"):
                    head, sep, data = url.partition(",")
                    if head.endswith(";base64") and sep:
                        found.append((i, url_path, head[5 : -len(";base64")], data))
                    continue
            stack.extend(
                (child, f"{where}.{k}") for k, child in reversed(list(node.items())) if isinstance(child, (dict, list))
            )
    return found


def lone_surrogate_at(value: Any, path: str) -> str | None:
    """The path of the first key or string under ``value`` with an unpaired surrogate."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if type(node) is str:
            if sanitize_surrogates(node) != node:
                return where
        elif isinstance(node, dict):
            items = list(node.items())
            for key, child in reversed(items):
                if type(key) is str and sanitize_surrogates(key) != key:
                    return f"{where}.{key}"
                stack.append((child, f"{where}.{key}"))
        elif isinstance(node, list):
            stack.extend((child, f"{where}.{k}") for k, child in reversed(list(enumerate(node))))
    return None
