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
  ``Path.write_text``/``write_bytes``/``touch``/``mkdir``/``unlink``/``rename``/``replace``;
* every call that starts, signals or waits for a process (``os.fork``, ``os.kill``,
  ``os.waitpid``, ``os._exit``, ``os.spawn*``/``exec*``, ``signal.*``...), next to the imports of
  ``multiprocessing``, ``concurrent.futures`` and ``threading``: the core only scans parts and
  merges them, ``pitools/ops/parallel.py`` runs them in processes.

Outside the pure packages the same write scan runs over the rest of ``pitools/``: ``store.py``
is the only writer, and every other write call is listed in :data:`WRITERS_ALLOWED` with the
reason it is not a session write (a cache, a pipe, a file the user asked for).

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
    # Processes and threads belong to pitools/ops/parallel.py.
    "multiprocessing",
    "concurrent.futures",
    "threading",
    "signal",
)

#: ``os`` functions that start, replace, signal, wait for or end a process (pure packages only).
OS_PROCESS = frozenset(
    {
        "fork",
        "forkpty",
        "register_at_fork",
        "kill",
        "killpg",
        "waitpid",
        "wait",
        "wait3",
        "wait4",
        "waitid",
        "pidfd_open",
        "_exit",
        "abort",
        "posix_spawn",
        "posix_spawnp",
        "pipe",
        "pipe2",
    }
)
OS_PROCESS_PREFIXES = ("spawn", "exec")

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
ALLOWED: dict[tuple[str, str], str] = {}


#: The only module that writes.
STORE = "pitools/store.py"

#: Writes outside store.py, each reviewed: (file relative to ROOT, call) -> why it is allowed.
WRITERS_ALLOWED: dict[tuple[str, str], str] = {
    # The output layer: stdout (or the --output file the user named), never a session.
    ("pitools/cli/archive_commands.py", ".write_text()"): "Output.write_text: stdout",
    ("pitools/cli/commands/request.py", ".write_text()"): "Output.write_text: stdout",
    ("pitools/cli/commands/heal.py", ".write_text()"): "Output.write_text: stdout",
    ("pitools/cli/commands/context.py", ".write_text()"): "Output.write_text: stdout",
    ("pitools/cli/commands/repair.py", ".write_bytes()"): "Output.write_bytes: stdout",
    ("pitools/cli/commands/tree.py", ".write_bytes()"): "Output.write_bytes: stdout",
    ("pitools/cli/output.py", ".write_bytes()"): "Output.write_bytes: stdout",
    ("pitools/cli/errors.py", "os.open() with write flags"): "/dev/null over stdout after a broken pipe",
    # Reading a session from stdin: a private temporary copy, removed afterwards.
    ("pitools/cli/options.py", "tempfile.mkdtemp"): "stdin copied to a private temporary folder",
    ("pitools/cli/options.py", "open() for writing"): "stdin copied to a private temporary folder",
    ("pitools/cli/options.py", "shutil.copyfileobj"): "stdin copied to a private temporary folder",
    ("pitools/cli/options.py", "shutil.rmtree"): "that temporary folder removed",
    ("pitools/ops/redact.py", "tempfile.TemporaryDirectory"): "export --redact: a private temporary copy",
    # The one module that starts processes: its own pipes to its helpers.
    ("pitools/ops/parallel.py", "os.write"): "task numbers and results through its own pipes to forked helpers",
    ("pitools/ops/redact.py", "os.chmod"): "that temporary folder made private",
    # The archive index: pitools' own cache (SQLite writes its files itself).
    ("pitools/cli/fast_search.py", "os.open() with write flags"): "the index lock file (O_RDWR, for flock)",
    ("pitools/ops/index.py", "os.open() with write flags"): "the index lock file",
    ("pitools/ops/index.py", "os.makedirs"): "the cache folder",
    ("pitools/ops/index.py", "os.unlink"): "index files of an old schema or a corrupt index",
    # Derived outputs: filled at the temporary path store.replace_output hands out.
    ("pitools/ops/dataset.py", "open() for writing"): "fills store.replace_output's temporary path",
    # A new session's folder; the session file itself is written by store.
    ("pitools/ops/newsession.py", "os.makedirs"): "the sessions folder of a new session (as Pi makes it)",
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
        # str.replace(old, new) takes two arguments; Path.replace(target) one, positional
        # (datetime.replace(tzinfo=...) takes keywords only).
        if attr == "replace" and (len(call.args) != 1 or call.keywords):
            return None
        if attr in PATH_WRITERS and not full.startswith(("os.", "str.", "re.")):
            return f".{attr}()"
        if attr == "open" and not full.startswith(("os.", "io.")):  # Path.open(mode)
            writes = _mode_writes(call, 0)
            if writes:
                return ".open() for writing"
    return None


def _process_call(call: ast.Call, imported_as: dict[str, str]) -> str | None:
    name = _dotted(call.func)
    head, _, rest = name.partition(".")
    full = f"{imported_as.get(head, head)}.{rest}" if rest else imported_as.get(head, head)
    if full.startswith("os."):
        fn = full[3:]
        if fn in OS_PROCESS or fn.startswith(OS_PROCESS_PREFIXES):
            return f"os.{fn}"
    return None


def _imported_names(tree: ast.AST, current: str, path: Path) -> dict[str, str]:
    """Each name an import binds in the module (at any depth) -> what it stands for, dotted:
    ``import os.path`` binds ``os`` -> ``os``; ``import numpy as np``, ``np`` -> ``numpy``;
    ``from os import replace as r``, ``r`` -> ``os.replace`` (relative modules resolved)."""
    imported_as: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported_as[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, current, path.name == "__init__.py")
            for alias in node.names:
                imported_as[alias.asname or alias.name] = f"{module}.{alias.name}"
    return imported_as


def check_file(root: Path, path: Path, *, imports: bool = True) -> Iterator[str]:
    rel = path.relative_to(root).as_posix()
    current = _module_name(root, path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    imported_as = _imported_names(tree, current, path)
    if imports:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    bad = _forbidden(alias.name)
                    if bad:
                        yield f"{rel}:{node.lineno}: imports {alias.name} (forbidden: {bad})"
            elif isinstance(node, ast.ImportFrom):
                module = _resolve(node.module, node.level, current, path.name == "__init__.py")
                for alias in node.names:
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
        if imports and isinstance(node, ast.Call):
            process = _process_call(node, imported_as)
            if process is not None:
                yield f"{rel}:{node.lineno}: starts or manages a process: {process} (only pitools/ops/parallel.py does)"
        if isinstance(node, ast.Call):
            problem = _call_problem(node, imported_as)
            if problem is None:
                continue
            key = (rel, problem)
            if key in ALLOWED or (not imports and key in WRITERS_ALLOWED):
                continue
            yield f"{rel}:{node.lineno}: writes: {problem}" + ("" if imports else " (only pitools/store.py writes)")


def write_calls(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, problem)`` for every call in ``path`` that writes or changes the file system."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported_as = _imported_names(tree, _module_name(root, path), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            problem = _call_problem(node, imported_as)
            if problem is not None:
                yield node.lineno, problem


def check(root: Path) -> list[str]:
    """Every problem under the pure packages of ``root``, and every write outside ``store.py``."""
    problems: list[str] = []
    pure = [root / package for package in PURE_PACKAGES]
    for package in pure:
        for path in sorted(package.rglob("*.py")):
            problems.extend(check_file(root, path))
    for path in sorted((root / "pitools").rglob("*.py")):
        if path == root / STORE or any(path.is_relative_to(p) for p in pure):
            continue
        problems.extend(check_file(root, path, imports=False))
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    problems = check(root)
    for line in problems:
        print(line)
    if problems:
        print(f"check_purity: {len(problems)} problem(s) (pure packages: {', '.join(PURE_PACKAGES)})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
