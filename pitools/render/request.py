"""Human and JSON views of ``pitools request``: the body, its transformations, the provider checks."""

from __future__ import annotations

from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.types import JsValue
from pitools.core.js.value import UNDEFINED, utf16_len
from pitools.core.request.build import RequestBuild
from pitools.core.request.check import RequestFinding
from pitools.render.safe import safe_text

_LIST_KEYS = ("messages", "input", "contents")


def _list_key(payload: dict[str, Any]) -> str:
    return next((k for k in _LIST_KEYS if isinstance(payload.get(k), list)), "messages")


def _size(value: JsValue) -> int:
    text = value if type(value) is str else (js_stringify(value) or "")
    return utf16_len(text)


def _block_label(block: Any) -> str:
    if not isinstance(block, dict):
        return f"{type(block).__name__}"
    kind = block.get("type")
    if kind is None:  # Gemini parts are keyed by their kind
        kind = next((k for k in ("functionCall", "functionResponse", "inlineData", "text") if k in block), "part")
        if kind == "text" and block.get("thought") is True:
            kind = "thought"
    for key in ("text", "thinking", "data", "input", "arguments", "content", "output", "source", "image_url", kind):
        if key in block:
            return f"{kind} {_size(block[key]):,}"
    return str(kind)


def item_summary(item: Any) -> tuple[str, list[str]]:
    """(role or item type, one label per block) for a message/input item/content of any API."""
    if not isinstance(item, dict):
        return (type(item).__name__, [])
    label = str(item.get("role") or item.get("type") or "?")
    if item.get("type") and item.get("role") and item.get("type") != "message":
        label = f"{item['type']}"
    blocks: list[str] = []
    content = item.get("content", item.get("parts"))
    if isinstance(content, str):
        blocks.append(f"text {utf16_len(content):,}")
    elif isinstance(content, list):
        blocks.extend(_block_label(b) for b in content)
    for call in item.get("tool_calls") or []:
        blocks.append(f"tool_call {_size(call):,}")
    for key in ("arguments", "output"):
        if key in item and not blocks:
            blocks.append(f"{key} {_size(item[key]):,}")
    return label, blocks


def request_human(
    build: RequestBuild,
    findings: list[RequestFinding] | None = None,
    *,
    bytes_len: int | None = None,
    file: str | None = None,
) -> str:
    """The body's outline, its transformations and (``findings`` given) the check, ending with
    the ``pitools heal`` command for ``file`` when a rule is broken."""
    m = build.model
    payload = build.payload
    key = _list_key(payload)
    items = payload.get(key) or []
    lines = [
        f"model     {m.get('provider')}/{m.get('id')}  ({m.get('api')}, from {m.get('source', 'catalogue')})",
        f"leaf      {build.leaf_id}   session {build.session_id}",
        f"thinking  {build.thinking_level}"
        + (f" (asked {build.thinking_requested})" if build.thinking_level != build.thinking_requested else "")
        + f"  [{build.thinking_source}]",
        f"body      {bytes_len if bytes_len is not None else _size(payload):,} bytes, {len(items)} {key}, "
        f"{len(build.llm_messages)} messages in Pi's context",
    ]
    system = payload.get("system") or (payload.get("config") or {}).get("systemInstruction")
    if system:
        lines.append(f"system    {_size(system):,} characters")
    tools = payload.get("tools") or (payload.get("config") or {}).get("tools")
    if tools:
        names = [t.get("name") or (t.get("function") or {}).get("name") for t in tools if isinstance(t, dict)]
        if tools and isinstance(tools[0], dict) and "functionDeclarations" in tools[0]:
            names = [d.get("name") for d in tools[0]["functionDeclarations"]]
        lines.append(f"tools     {', '.join(str(n) for n in names)}")
    shown = (key, "model", "system", "tools", "stream", "config")
    extras = [k for k in payload if k not in shown and payload[k] is not UNDEFINED]
    if extras:
        lines.append("fields    " + ", ".join(f"{k}={_short(payload[k])}" for k in extras))
    lines.append("")
    for i, item in enumerate(items):
        label, blocks = item_summary(item)
        lines.append(f"  {key}.{i:<4} {label:<22} {', '.join(blocks)}")
    if build.notes:
        lines.append("")
        lines.append("transformations (pi-ai, before sending):")
        for note in build.notes:
            where = f" [Pi message {note.index}]" if note.index is not None else ""
            lines.append(f"  {note.code}: {note.message}{where}")
    if findings is not None:
        lines.append("")
        lines.extend(findings_human(findings))
        if findings and file is not None:
            lines.append("")
            lines.append(f"fix: {heal_command(file, model_reference(build.model))}")
    return safe_text("\n".join(lines)) + "\n"


def model_reference(model: dict[str, Any]) -> str:
    """``PROVIDER/ID`` of a resolved model."""
    return f"{model.get('provider')}/{model.get('id')}"


def heal_command(file: str, model: str) -> str:
    """The ``pitools heal`` command line that rewrites ``file`` so ``model`` takes its request
    (the one place this text is written: request --check and validate --for-model print it).
    Quoted for a POSIX shell, so it can be pasted whatever the names hold."""
    import shlex

    return f"pitools heal {shlex.quote(file)} --for-model {shlex.quote(model)}"


def findings_human(findings: list[RequestFinding]) -> list[str]:
    if not findings:
        return ["check: no provider rule is broken"]
    out = [f"check: {len(findings)} finding(s)"]
    for f in findings:
        where = f" at {f.path}" if f.path else ""
        out.append(f"  {f.severity:<7} {f.code}{where}: {f.message}")
        out.append(f"          source: {f.source}")
    return out


def _short(value: JsValue) -> str:
    text = js_stringify(value) or "undefined"
    return text if len(text) <= 60 else text[:57] + "..."


def check_json(build: RequestBuild, findings: list[RequestFinding]) -> dict[str, Any]:
    from pitools.core.request.check import worst_severity

    return {
        "model": model_reference(build.model),
        "api": build.model.get("api"),
        "leafId": build.leaf_id,
        "thinkingLevel": build.thinking_level,
        "ok": worst_severity(findings) != "error",
        "findings": [f.to_json() for f in findings],
        "transformations": [{"code": n.code, "message": n.message, "index": n.index} for n in build.notes],
    }


def _side(build: RequestBuild) -> dict[str, Any]:
    payload = build.payload
    key = _list_key(payload)
    return {
        "model": model_reference(build.model),
        "api": build.model.get("api"),
        "thinkingLevel": build.thinking_level,
        "bytes": len((js_stringify(payload) or "").encode("utf-8", "surrogatepass")),
        "items": len(payload.get(key) or []),
        "itemsKey": key,
        "transformations": [{"code": n.code, "message": n.message, "index": n.index} for n in build.notes],
    }


def payload_paths(
    value: Any, prefix: str = "", out: dict[str, Any] | None = None, limit: int = 20000
) -> dict[str, Any]:
    """Leaf path → value (``messages.3.content.0.text``), for comparing two bodies of one API."""
    out = {} if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(value, dict):
        if not value:
            out[prefix or "."] = {}
        for k, v in value.items():
            if v is not UNDEFINED:  # JSON leaves such a key out
                payload_paths(v, f"{prefix}.{k}" if prefix else k, out, limit)
    elif isinstance(value, list):
        if not value:
            out[prefix or "."] = []
        for i, v in enumerate(value):
            payload_paths(v, f"{prefix}.{i}" if prefix else str(i), out, limit)
    else:
        out[prefix] = value
    return out


def diff_json(a: RequestBuild, b: RequestBuild, max_changes: int = 200) -> dict[str, Any]:
    """What changes between the body for model A and for model B."""
    notes_a = {(n.code, n.message) for n in a.notes}
    notes_b = {(n.code, n.message) for n in b.notes}
    result: dict[str, Any] = {
        "a": _side(a),
        "b": _side(b),
        "transformationsOnlyA": [{"code": c, "message": m} for c, m in sorted(notes_a - notes_b)],
        "transformationsOnlyB": [{"code": c, "message": m} for c, m in sorted(notes_b - notes_a)],
        "sameApi": a.model.get("api") == b.model.get("api"),
        "changes": [],
        "changesOmitted": 0,
    }
    if result["sameApi"]:
        pa, pb = payload_paths(a.payload), payload_paths(b.payload)
        changes = []
        for path in list(pa) + [p for p in pb if p not in pa]:
            va, vb = pa.get(path, _MISSING), pb.get(path, _MISSING)
            if va is _MISSING or vb is _MISSING or va != vb or type(va) is not type(vb):
                changes.append(
                    {
                        "path": path,
                        "a": None if va is _MISSING else va,
                        "b": None if vb is _MISSING else vb,
                        "kind": "added" if va is _MISSING else "removed" if vb is _MISSING else "changed",
                    }
                )
        result["changes"] = changes[:max_changes]
        result["changesOmitted"] = max(0, len(changes) - max_changes)
    return result


_MISSING = object()


def diff_human(diff: dict[str, Any]) -> str:
    lines = []
    for side in ("a", "b"):
        s = diff[side]
        lines.append(
            f"{side.upper()}  {s['model']} ({s['api']}), thinking {s['thinkingLevel']}: {s['bytes']:,} "
            f"bytes, {s['items']} {s['itemsKey']}"
        )
    for side, key in (("A", "transformationsOnlyA"), ("B", "transformationsOnlyB")):
        for note in diff[key]:
            lines.append(f"  only {side}: {note['code']}: {note['message']}")
    if not diff["sameApi"]:
        lines.append("  different APIs: the bodies have different shapes; the transformations above are what differs")
    else:
        for change in diff["changes"]:
            lines.append(f"  {change['kind']:<8} {change['path']}: {_short(change['a'])} -> {_short(change['b'])}")
        if diff["changesOmitted"]:
            lines.append(f"  ... {diff['changesOmitted']} more")
        if not diff["changes"]:
            lines.append("  the two bodies are identical")
    return safe_text("\n".join(lines)) + "\n"
