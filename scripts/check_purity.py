"""Check that pitools' pure packages stay pure: no forbidden import at any level, no writes.

import-linter (``lint-imports``, contracts in pyproject.toml) checks the import graph. This
checker reads the source itself, so it also sees what a graph cannot:

* every ``import``/``from ... import`` anywhere in a module (module level, inside functions,
  under ``if TYPE_CHECKING``), relative imports resolved, ``from pitools import store``, and
  ``importlib.import_module("...")`` / ``__import__("...")`` with a constant name;
* every call that writes or changes the file system: ``open()``/``Path.open()`` with a mode
  holding ``w``, ``a``, ``x`` or ``+`` (or a mode that is not a constant), ``os.open`` with
  write flags, ``os.replace``/``rename``/``remove``/``unlink``/``mkdir``/``makedirs``/``write``/
  ``truncate``/``link``/``symlink``/``chmod``..., ``shutil.*`` writers, ``tempfile.*``, and
  ``Path.write_text``/``write_bytes``/``touch``/``mkdir``/``unlink``/``rename``/``replace``.

Usage: ``python scripts/check_purity.py [ROOT]`` (ROOT holds the ``pitools`` package; default:
the repository). Exit 1 and one line per problem when something is found.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

#: Packages that must stay pure (relative to ROOT).
PURE_PACKAGES = ("pitools/core", "pitools/piconfig")

#: Modules the pure packages must not import, at any level.
FORBIDDEN_IMPORTS = (
    "pitools.store",
    "pitools.summarize",
    "pitools.ops",
    "pitools.cli",
    "pitools.render",
    "click",
    "rich",
    "httpx",
    "subprocess",
    "socket",
    "urllib.request",
    "http.client",
)

#: ``os`` functions that change the file system or write to a descriptor.
OS_WRITERS = frozenset(
    {
        "replace",
        "rename",
        "renames",
        "remove",
        "unlink",
        "rmdir",
        "removedirs",
        "mkdir",
        "makedirs",
        "write",
        "pwrite",
        "writev",
        "truncate",
        "ftruncate",
        "link",
        "symlink",
        "chmod",
        "fchmod",
        "chown",
        "utime",
        "mkfifo",
        "mknod",
        "system",
        "popen",
        "sendfile",
        "copy_file_range",
        "posix_fallocate",
    }
)
OS_WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC", "O_EXCL", "O_TMPFILE"})
SHUTIL_WRITERS = frozenset(
    {"copy", "copy2", "copyfile", "copyfileobj", "copymode", "copystat", "copytree", "move", "rmtree", "make_archive"}
)
PATH_WRITERS = frozenset(
    {"write_text", "write_bytes", "touch", "mkdir", "unlink", "rmdir", "rename", "replace", "symlink_to", "hardlink_to"}
)

#: Known, reviewed exceptions: (file relative to ROOT, call) -> why it is not a file write.
ALLOWED = {
    ("pitools/core/validate/parts.py", "os.write"): "writes part numbers/results to its own pipe to a forked child",
}


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str | None, level: int, current: str, is_package: bool) -> str:
    if level == 0:
        return module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _forbidden(name: str) -> str | None:
    for bad in FORBIDDEN_IMPORTS:
        if name == bad or name.startswith(bad + "."):
            return bad
    return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _mode_writes(call: ast.Call, position: int) -> bool | None:
    """True/False for a constant mode, None when the mode is not a constant."""
    mode: ast.AST | None = call.args[position] if len(call.args) > position else None
    for kw in call.keywords:
        if kw.arg == "mode":
            mode = kw.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return None


def _flag_names(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name)
    }


def _call_problem(call: ast.Call, imported_as: dict[str, str]) -> str | None:
    name = _dotted(call.func)
    head, _, rest = name.partition(".")
    full = f"{imported_as.get(head, head)}.{rest}" if rest else imported_as.get(head, head)
    if full in ("builtins.open", "open", "io.open"):
        writes = _mode_writes(call, 1)
        if writes is None:
            return "open() with a mode that is not a constant"
        return "open() for writing" if writes else None
    if full.startswith("os."):
        fn = full[3:]
        if fn == "open":
            return "os.open() with write flags" if _flag_names(call) & OS_WRITE_FLAGS else None
        if fn == "fdopen":
            writes = _mode_writes(call, 1)
            return "os.fdopen() for writing" if writes or writes is None else None
        if fn in OS_WRITERS:
            return f"os.{fn}"
    if full.startswith("shutil.") and full[7:] in SHUTIL_WRITERS:
        return full
    if full.startswith("tempfile."):
        return full
    if isinstance(call.func, ast.Attribute):
        attr = call.func.attr
        # str.replace(old, new) takes two arguments; Path.replace(target) one.
        if attr == "replace" and len(call.args) + len(call.keywords) != 1:
            return None
        if attr in PATH_WRITERS and not full.startswith(("os.", "str.", "re.")):
            return f".{attr}()"
        if attr == "open" and not full.startswith(("os.", "io.")):  # Path.open(mode)
            writes = _mode_writes(call, 0)
            if writes:
                return ".open() for writing"
    return None


def check_file(root: Path, path: Path) -> Iterator[str]:
    rel = path.relative_to(root).as_posix()
    current = _module_name(root, path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    imported_as: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported_as[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
                bad = _forbidden(alias.name)
                if bad:
                    yield f"{rel}:{node.lineno}: imports {alias.name} (forbidden: {bad})"
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, current, path.name == "__init__.py")
            for alias in node.names:
                imported_as[alias.asname or alias.name] = f"{module}.{alias.name}"
                bad = _forbidden(module) or _forbidden(f"{module}.{alias.name}")
                if bad:
                    yield f"{rel}:{node.lineno}: imports {module}.{alias.name} (forbidden: {bad})"
        elif isinstance(node, ast.Call):
            func = _dotted(node.func)
            if func in ("importlib.import_module", "import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    bad = _forbidden(arg.value)
                    if bad:
                        yield f"{rel}:{node.lineno}: imports {arg.value} dynamically (forbidden: {bad})"
                else:
                    yield f"{rel}:{node.lineno}: dynamic import of a name that is not a constant"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            problem = _call_problem(node, imported_as)
            if problem is None:
                continue
            key = (rel, problem)
            if key in ALLOWED:
                continue
            yield f"{rel}:{node.lineno}: writes: {problem}"


def check(root: Path) -> list[str]:
    """Every problem under the pure packages of ``root``."""
    problems: list[str] = []
    for package in PURE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            problems.extend(check_file(root, path))
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    problems = check(root)
    for line in problems:
        print(line)
    if problems:
        print(f"check_purity: {len(problems)} problem(s) in {', '.join(PURE_PACKAGES)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
