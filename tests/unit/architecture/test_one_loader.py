"""One loader: outside ``pitools/core/session`` a session is read through ``load()`` only.

The ``one-loader`` import-linter contract (pyproject.toml) keeps the line scanner (``lines``) and
the lean index (``lean``) inside the package; this AST scan also sees what a module-level
contract cannot: the names taken from ``loaded`` (its entry accessors and the ``Session`` view
are public, the functions that build a session are the loader's own) and private names of
``load``. Both are proven able to fail on a temporary tree.
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

from tests import support
from tests.unit.architecture.test_contracts import _lint_imports, _tree, check_purity

ROOT = support.ROOT
PACKAGE = "pitools.core.session"
#: Modules behind the door: nothing outside the package imports them.
INTERNAL = {f"{PACKAGE}.lines", f"{PACKAGE}.lean"}
#: What may be taken from ``loaded``: the view type and the entry accessors.
LOADED_PUBLIC = {"Session", "entry_id", "entry_type", "get"}


def violations(root: Path) -> list[str]:
    """Every import under ``root``'s ``pitools`` (outside core/session) and ``scripts`` that goes
    around the loader's door, as ``file:line: what``."""
    found: list[str] = []
    files = [p for p in (root / "pitools").rglob("*.py") if "core/session/" not in p.as_posix()]
    files += sorted((root / "scripts").glob("*.py")) if (root / "scripts").is_dir() else []
    for path in sorted(files):
        module = check_purity._module_name(root, path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                found += [f"{where}: imports {a.name}" for a in node.names if _internal(a.name)]
            elif isinstance(node, ast.ImportFrom):
                source = check_purity._resolve(node.module, node.level, module, path.name == "__init__.py")
                for alias in node.names:
                    name = alias.name
                    if _internal(source) or (source == PACKAGE and _internal(f"{PACKAGE}.{name}")):
                        found.append(f"{where}: imports {name} from {source}")
                    elif source == f"{PACKAGE}.loaded" and name not in LOADED_PUBLIC:
                        found.append(f"{where}: takes {name} from {source} (load() builds sessions)")
                    elif source == PACKAGE and name == "loaded":
                        found.append(f"{where}: imports the module {PACKAGE}.loaded")
                    elif source == f"{PACKAGE}.load" and name.startswith("_"):
                        found.append(f"{where}: takes the private {name} from {source}")
    return found


def _internal(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in INTERNAL)


def test_nothing_outside_core_session_goes_around_load() -> None:
    assert violations(ROOT) == []


def test_the_scan_sees_every_way_around(tmp_path: Path) -> None:
    files = {
        "pitools/__init__.py": "",
        "pitools/core/__init__.py": "",
        "pitools/core/session/__init__.py": "",
        "pitools/core/session/lines.py": "from pitools.core.session.lean import x\n",  # inside: fine
        "pitools/ops/__init__.py": "",
        "pitools/ops/good.py": """
            from pitools.core.session.load import load, Loaded
            from pitools.core.session.loaded import Session, entry_id
        """,
        "pitools/ops/top.py": "import pitools.core.session.lines\n",
        "pitools/ops/late.py": """
            def f():
                from pitools.core.session.lean import open_lean
                from pitools.core.session import lines
        """,
        "pitools/ops/door.py": """
            from pitools.core.session.loaded import session_from_raw
            from ..core.session.load import _LeanLoaded
        """,
        "scripts/tool.py": "from pitools.core.session.lines import read_session\n",
    }
    got = violations(_tree(tmp_path, files))
    assert [line.split(":")[0] for line in got] == [
        "pitools/ops/door.py",
        "pitools/ops/door.py",
        "pitools/ops/late.py",
        "pitools/ops/late.py",
        "pitools/ops/top.py",
        "scripts/tool.py",
    ], got


def test_the_import_contract_fails_on_a_module_that_goes_around(tmp_path: Path) -> None:
    files = {
        "fakepkg/__init__.py": "",
        "fakepkg/core/__init__.py": "",
        "fakepkg/core/session/__init__.py": "",
        "fakepkg/core/session/lines.py": "",
        "fakepkg/core/session/load.py": "from fakepkg.core.session import lines\n",
        "fakepkg/ops/__init__.py": "",
        "fakepkg/ops/good.py": "from fakepkg.core.session import load\n",
        "fakepkg/ops/bad.py": "def f():\n    from fakepkg.core.session import lines\n",
        ".importlinter": """
            [importlinter]
            root_package = fakepkg

            [importlinter:contract:one-loader]
            name = one loader
            type = forbidden
            source_modules = fakepkg.ops
            forbidden_modules = fakepkg.core.session.lines
            allow_indirect_imports = true
        """,
    }
    root = _tree(tmp_path, files)
    result = subprocess.run(
        [_lint_imports(), "--no-cache", "--config", ".importlinter"],
        cwd=root,
        env=dict(os.environ, PYTHONPATH=str(root)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "fakepkg.ops.bad -> fakepkg.core.session.lines" in result.stdout
    assert "fakepkg.ops.good" not in result.stdout
