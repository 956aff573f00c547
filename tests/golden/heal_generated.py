"""Generated golden cases for ``pitools heal``: the two size rules, whose wedges are too big to commit.

``image-too-large`` needs an image over pi-ai's 4,718,592-byte ``maxBytes`` (a 6.4 MB session)
and ``request-too-large`` a body over Gemini's 20,971,520-byte ``maxRequestBytes`` (26 MB). So
``golden/heal-<case>/`` holds no session: :func:`generate` writes the wedge from a seed (SHAKE-256
bytes, no other randomness; the same seed gives the same bytes on every Python), and
``generated.json`` holds small facts about it: the SHA-256 of the wedge, of the lines
``--apply`` appends and of the ``-o`` session, and the check's codes before and after.

``--record`` (``make golden``) generates and heals each case in a temporary folder, runs
``scripts/record_requests.mjs --heal-folder`` there (Pi's default leaf, Pi's LLM messages and
pi-ai's body for each file, exactly as for the committed heal cases) and the oracle on both
healed files, and commits them shrunk: every string longer than :data:`SHRINK_OVER` characters
(the base64 images and the long tool output) becomes a marker holding its SHA-256 and length
(:func:`shrink`), and each body and LLM message list keeps the SHA-256 of its full text, so the
test compares pitools' full bytes with pi-ai's. Run: ``python -m tests.golden.heal_generated
--record`` from the project root (needs node and the reference).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.golden.heal_cases import heal_files
from tests.golden.request_cases import GOLDEN, TOOLS, USAGE, _Writer

#: Strings longer than this are recorded as their SHA-256 and length.
SHRINK_OVER = 4096
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _bytes(seed: str, n: int) -> bytes:
    """``n`` pseudo-random bytes from ``seed`` (SHAKE-256: fixed by its standard, not by Python's ``random``)."""
    return hashlib.shake_256(seed.encode()).digest(n)


def _png(seed: str, size: int) -> str:
    """Base64 of ``size`` bytes that start like a PNG (what the check sniffs), the rest seeded noise."""
    return base64.b64encode(PNG_MAGIC + _bytes(seed, size - len(PNG_MAGIC))).decode("ascii")


def _log(seed: str, size: int) -> str:
    """About ``size`` characters of a build log: numbered lines of 60 characters, a seeded hash each."""
    noise = _bytes(seed, size // 60 * 24).hex()
    return "".join(f"{n:07d} ok {noise[k : k + 48]}\n" for n, k in enumerate(range(0, len(noise), 48)))


def _assistant(content: list[Any], provider: str, api: str, model: str, stop: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
            "usage": USAGE, "stopReason": stop}  # fmt: skip


def image_size(seed: int) -> str:
    """A 4.8 MB screenshot pasted into a Claude session: over pi-ai's image ``maxBytes`` (Anthropic
    refuses images over 5 MB), beside a small one that stays."""
    w = _Writer("019a5f60-6666-7777-8888-9999aaaabbbb")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    w.add({"type": "thinking_level_change", "thinkingLevel": "off"})
    icon = {"type": "image", "data": _png(f"{seed}/icon", 2_000), "mimeType": "image/png"}
    w.msg({"role": "user", "content": [{"type": "text", "text": "This is the icon."}, icon]})
    w.msg(_assistant([{"type": "text", "text": "A blue square."}], "anthropic", "anthropic-messages",
                     "claude-sonnet-4-5", "stop"))  # fmt: skip
    shot = {"type": "image", "data": _png(f"{seed}/screen", 4_800_000), "mimeType": "image/png"}
    w.msg({"role": "user", "content": [{"type": "text", "text": "And the full-resolution screenshot?"}, shot]})
    w.msg(_assistant([{"type": "text", "text": "The login page."}], "anthropic", "anthropic-messages",
                     "claude-sonnet-4-5", "stop"))  # fmt: skip
    w.msg({"role": "user", "content": "Is the icon on it?"})
    return w.text()


def request_size(seed: int) -> str:
    """A Gemini session with five screenshots (4.6 MB, then 2.7 MB each) and a 5.5 MB build log: a
    26 MB body, over Gemini's 20 MB request limit. Healing turns the largest screenshot into a note
    and cuts the log, the two largest parts (both kinds of cut, largest first); the rest stays."""
    gemini = ("google", "google-generative-ai", "gemini-2.5-pro")
    w = _Writer("019a5f60-7777-8888-9999-aaaabbbbcccc")
    w.msg({"role": "system", "content": "", "sections": {"preamble": "You are an expert coding assistant."},
           "toolsAdded": TOOLS[:2]})  # fmt: skip
    w.add({"type": "model_change", "provider": "google", "modelId": "gemini-2.5-pro"})
    w.add({"type": "thinking_level_change", "thinkingLevel": "off"})
    for k, size in enumerate((4_600_000, 2_700_000, 2_700_000, 2_700_000, 2_700_000)):
        shot = {"type": "image", "data": _png(f"{seed}/shot{k}", size), "mimeType": "image/png"}
        w.msg({"role": "user", "content": [{"type": "text", "text": f"Screenshot {k + 1} of the report."}, shot]})
        w.msg(_assistant([{"type": "text", "text": f"Noted page {k + 1}."}], *gemini, "stop"))
    w.msg({"role": "user", "content": "Now run the build."})
    call = {"type": "toolCall", "id": "call_build_1", "name": "bash", "arguments": {"command": "make build"}}
    w.msg(_assistant([call], *gemini, "toolUse"))
    w.msg({"role": "toolResult", "toolCallId": "call_build_1", "toolName": "bash",
           "content": [{"type": "text", "text": _log(f"{seed}/build", 5_500_000)}], "isError": False})  # fmt: skip
    w.msg(_assistant([{"type": "text", "text": "The build passed."}], *gemini, "stop"))
    w.msg({"role": "user", "content": "Summarise the report."})
    return w.text()


#: case -> (target model, generator, seed).
GENERATED: dict[str, tuple[str, Callable[[int], str], int]] = {
    "heal-image-size": ("anthropic/claude-sonnet-4-5", image_size, 1),
    "heal-request-size": ("google/gemini-2.5-pro", request_size, 1),
}


def generate(case: str, folder: Path) -> Path:
    """Write the case's wedge to ``folder/session.jsonl``."""
    _, make, seed = GENERATED[case]
    path = folder / "session.jsonl"
    path.write_text(make(seed), encoding="utf-8")
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shrink(value: Any) -> Any:
    """``value`` with every string longer than :data:`SHRINK_OVER` replaced by a marker naming its
    UTF-8 SHA-256 and its length (keys and structure kept): two shrunk values are equal exactly when
    the full ones are (up to a SHA-256 collision)."""
    if type(value) is str:
        if len(value) <= SHRINK_OVER:
            return value
        digest = sha256(value.encode("utf-8", "surrogatepass"))
        return f"<{len(value)} characters, sha256 {digest}>"
    if type(value) is list:
        return [shrink(v) for v in value]
    if type(value) is dict:
        return {k: shrink(v) for k, v in value.items()}
    return value


def shrink_text(text: str) -> str:
    """A JSON text (a body or LLM messages) shrunk, written as JSON.stringify would write it."""
    from pitools.core.js.json.encode import js_stringify
    from pitools.core.js.json.parse import parse_json_line

    return js_stringify(shrink(parse_json_line(text.encode("utf-8", "surrogatepass"))[0])) or ""


def facts(folder: Path, model_ref: str) -> dict[str, Any]:
    """The small facts about a generated case's files (in ``folder``) that ``generated.json`` keeps."""
    source = (folder / "session.jsonl").read_bytes()
    healed = (folder / "healed.jsonl").read_bytes()
    assert healed.startswith(source)
    return {
        "model": model_ref,
        "sessionBytes": len(source),
        "sessionSha256": sha256(source),
        "appended": healed[len(source) :].decode("utf-8"),
        "healedNewSha256": sha256((folder / "healed-new.jsonl").read_bytes()),
    }


def _shrink_record(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    for key in ("payload", "llm"):
        if type(record.get(key)) is str:
            text = record[key]
            out[f"{key}Sha256"] = sha256(text.encode("utf-8", "surrogatepass"))
            out[f"{key}Bytes"] = len(text.encode("utf-8", "surrogatepass"))
            out[key] = shrink_text(text)
    return out


def record_case(case: str, oracle: Path, ref: Path) -> Path:
    """Generate, heal and record one case into ``golden/<case>/`` (needs node and the reference)."""
    import lzma
    import os
    import subprocess
    import tempfile

    from pitools.core.js.json.encode import js_stringify
    from pitools.core.js.json.parse import parse_json_line
    from pitools.core.request.check import check_request
    from pitools.ops.request import resolve_model
    from tests.support import load_script

    store = load_script("golden_store")
    model_ref = GENERATED[case][0]
    target = GOLDEN / case
    target.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PI_REF_DIR=str(ref), TZ="UTC")
    with tempfile.TemporaryDirectory(prefix="pitools-heal-gen-") as tmp:
        folder = Path(tmp)
        generate(case, folder)
        (folder / "target.txt").write_text(model_ref + "\n", encoding="utf-8")
        heal_files(folder, model_ref)
        script = Path(__file__).resolve().parents[2] / "scripts" / "record_requests.mjs"
        cmd = ["node", "--max-old-space-size=4096", str(script), "--heal-folder", str(folder)]
        subprocess.run(cmd, env=env, timeout=600, check=True)
        recording = store.read_recording(folder / "heal.jsonl")
        model = resolve_model(model_ref, use_config=False)
        codes: dict[str, list[str]] = {}
        for record in recording["records"]:
            payload = parse_json_line(record["payload"].encode("utf-8", "surrogatepass"))[0]
            llm = parse_json_line(record["llm"].encode("utf-8", "surrogatepass"))[0]
            codes[record["file"]] = [f.code for f in check_request(model, payload, llm)]
        recording["case"] = case
        recording["records"] = [_shrink_record(r) for r in recording["records"]]
        (target / "heal.jsonl").write_bytes(store.recording_lines(recording))
        for name in ("healed", "healed-new"):
            cmd = ["node", "--max-old-space-size=4096", str(oracle), str(folder / f"{name}.jsonl"), "--all-leaves"]
            proc = subprocess.run(cmd, capture_output=True, env=env, timeout=600, check=True)
            view = js_stringify(shrink(parse_json_line(proc.stdout)[0])) or ""
            blob = lzma.compress(view.encode("utf-8", "surrogatepass"), preset=9 | lzma.PRESET_EXTREME)
            (target / f"{name}.pi.json.xz").write_bytes(blob)
        out = {**facts(folder, model_ref), "checkCodes": codes}
        (target / "generated.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return target


def record_all(oracle: Path, ref: Path) -> list[Path]:
    return [record_case(case, oracle, ref) for case in GENERATED]


if __name__ == "__main__":
    import sys

    from tests.support import load_script

    record_golden = load_script("record_golden")
    if "--record" in sys.argv:
        for path in record_all(record_golden.oracle_script(), record_golden.reference_dir()):
            print(path)
