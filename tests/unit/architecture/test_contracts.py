"""The layers hold: core and piconfig import no writer/model/terminal code and write no file.

Two checkers, each proven able to fail on a temporary tree that breaks the rule:
import-linter (the contracts in pyproject.toml) and scripts/check_purity.py (an AST scan that
also sees function-level and dynamic imports and every write call).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import support

ROOT = support.ROOT


check_purity = support.load_script("check_purity")


def _lint_imports() -> str:
    exe = Path(sys.executable).with_name("lint-imports")
    found = str(exe) if exe.exists() else shutil.which("lint-imports")
    if found is None:
        pytest.skip("import-linter is not installed (make install adds it)")
    return found


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


# -- the repository -------------------------------------------------------------------------------


def test_core_and_piconfig_are_pure() -> None:
    assert check_purity.check(ROOT) == []


def test_import_linter_contracts_are_kept() -> None:
    result = subprocess.run([_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# -- the checkers can fail ------------------------------------------------------------------------

BAD_CORE = {
    "pitools/__init__.py": "",
    "pitools/store.py": "",
    "pitools/core/__init__.py": "",
    "pitools/core/good.py": """
        import os
        def read(p):
            with open(p, "rb") as fh:
                return fh.read().replace(b"a", b"b")
        def also(p):
            return os.open(p, os.O_RDONLY)
    """,
    "pitools/core/toplevel.py": "import pitools.store\n",
    "pitools/core/infunction.py": """
        def apply():
            from pitools import store
            return store
    """,
    "pitools/core/relative.py": """
        def apply():
            from .. import summarize
            from ..ops import compaction
    """,
    "pitools/core/dynamic.py": """
        import importlib
        def apply():
            return importlib.import_module("pitools.cli")
    """,
    "pitools/core/terminal.py": """
        def show():
            import rich.console
    """,
    "pitools/core/processes.py": """
        import os
        from os import fork as spawn_child
        def split(work):
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            r, w = os.pipe()
            pid = spawn_child()
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os._exit(0)
    """,
    "pitools/core/writes.py": """
        import os, shutil, tempfile
        from pathlib import Path
        def w(p, mode):
            open(p, "w").close()
            open(p, mode="ab")
            open(p, mode)
            os.replace(p, p + ".x")
            os.open(p, os.O_WRONLY | os.O_CREAT)
            Path(p).write_text("x")
            Path(p).replace("y")
            shutil.copyfile(p, "z")
            tempfile.mkstemp()
    """,
}


def test_purity_checker_catches_forbidden_imports_and_writes(tmp_path: Path) -> None:
    root = _tree(tmp_path, BAD_CORE)
    problems = check_purity.check(root)
    text = "\n".join(problems)
    assert "pitools/core/good.py" not in text
    assert "toplevel.py:1: imports pitools.store" in text
    assert "infunction.py:3: imports pitools.store" in text  # a function-level import
    assert "relative.py:3: imports pitools.summarize" in text
    assert "relative.py:4: imports pitools.ops.compaction" in text
    assert "dynamic.py:4: imports pitools.cli dynamically" in text
    assert "terminal.py:3: imports rich.console" in text
    # Processes belong to pitools/ops/parallel.py: no import of the machinery, no fork, kill, wait.
    processes = [p for p in problems if "processes.py" in p]
    assert "processes.py:5: imports multiprocessing" in text
    assert "processes.py:6: imports concurrent.futures.ProcessPoolExecutor" in text
    for line, call in ((7, "os.pipe"), (8, "os.fork"), (9, "os.kill"), (10, "os.waitpid"), (11, "os._exit")):
        assert f"processes.py:{line}: starts or manages a process: {call}" in text
    assert len(processes) == 7, processes
    writes = [p for p in problems if "writes.py" in p]
    assert len(writes) == 9, writes
    assert check_purity.main(["check_purity", str(root)]) == 1


def test_import_linter_sees_function_level_imports(tmp_path: Path) -> None:
    """grimp reads imports inside functions too: a contract breaks on one."""
    lint = _lint_imports()
    root = _tree(
        tmp_path,
        {
            "fakepkg/__init__.py": "",
            "fakepkg/store.py": "",
            "fakepkg/core/__init__.py": "",
            "fakepkg/core/plan.py": """
                def apply():
                    from fakepkg import store
                    return store
            """,
            ".importlinter": """
                [importlinter]
                root_package = fakepkg

                [importlinter:contract:pure]
                name = pure core
                type = forbidden
                source_modules = fakepkg.core
                forbidden_modules = fakepkg.store
            """,
        },
    )
    env = dict(os.environ, PYTHONPATH=str(root))
    result = subprocess.run(
        [lint, "--no-cache", "--config", ".importlinter"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "fakepkg.core.plan -> fakepkg.store" in result.stdout


# -- store.py is the only writer ------------------------------------------------------------------


def test_a_write_outside_store_is_caught_unless_listed(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pitools/__init__.py": "",
            "pitools/store.py": "import os\ndef put(p):\n    os.replace(p, p + '.x')\n",
            "pitools/core/__init__.py": "",
            "pitools/piconfig/__init__.py": "",
            "pitools/ops/__init__.py": "",
            "pitools/ops/sneaky.py": """
                import datetime, os
                from pathlib import Path
                def save(p):
                    Path(p).write_text("x")
                    os.replace(p, p + ".bak")
                    datetime.datetime.now().replace(tzinfo=None)  # not a file
            """,
        },
    )
    problems = check_purity.check(root)
    assert problems == [
        "pitools/ops/sneaky.py:5: writes: .write_text() (only pitools/store.py writes)",
        "pitools/ops/sneaky.py:6: writes: os.replace (only pitools/store.py writes)",
    ]


@pytest.mark.slow
def test_every_listed_writer_still_writes() -> None:
    """An entry of WRITERS_ALLOWED whose write is gone is stale: the list only shrinks by hand."""
    found = {
        (path.relative_to(ROOT).as_posix(), problem)
        for path in sorted((ROOT / "pitools").rglob("*.py"))
        for _line, problem in check_purity.write_calls(ROOT, path)
    }
    assert set(check_purity.WRITERS_ALLOWED) - found == set()


# -- no import cycle anywhere ---------------------------------------------------------------------

#: Module cycles that exist today, each with the reason it is still there. The test fails on any
#: other cycle; remove an entry when its cycle is gone.
KNOWN_CYCLES: set[frozenset[str]] = set()


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e", "f"}, "f": set()}
    assert _cycles(edges) == [frozenset({"a", "b", "c"})]


def test_no_import_cycle_in_pitools() -> None:
    """No module imports, directly or through others, a module that imports it back (imports
    inside functions included; those under ``if TYPE_CHECKING:`` never run), except the cycles
    listed in KNOWN_CYCLES."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("pitools", exclude_type_checking_imports=True)
    modules = {m for m in graph.modules if m == "pitools" or m.startswith("pitools.")}
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}
    cycles = _cycles(edges)
    assert [sorted(c) for c in cycles if c not in KNOWN_CYCLES] == []
