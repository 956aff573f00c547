"""The layers hold: core and piconfig import no writer/model/terminal code and write no file.

Two checkers, each proven able to fail on a temporary tree that breaks the rule:
import-linter (the contracts in pyproject.toml) and scripts/check_purity.py (an AST scan that
also sees function-level and dynamic imports and every write call).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from tests import support

ROOT = support.ROOT


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_purity", ROOT / "scripts" / "check_purity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_purity = _load_checker()


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
