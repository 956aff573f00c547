"""Install and release (issue 28): one distribution name, one version, a changelog, a user install."""

from __future__ import annotations

import re
import tomllib

from pitools import __version__
from tests import support

ROOT = support.ROOT
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")
DIST = "pi-session-tools"


def _tracked_text_files() -> list[str]:
    import subprocess

    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [n for n in names if n.endswith((".md", ".py", ".toml", ".yaml", ".sh")) and not n.startswith("golden/")]


def test_the_distribution_name_is_free_of_the_pypi_clash_and_the_command_stays_pitools() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"pitools": "pitools.cli:console_main"}
    assert set(project["optional-dependencies"]) == {"otel", "dataset", "testing"}


def test_nothing_tells_users_to_install_the_other_pitools() -> None:
    # `pip install pitools` / `pitools[otel]` would install an unrelated genomics package.
    bad = re.compile(r"(pip|pipx|uv tool) install\s+'?pitools\b|\bpitools\[(otel|dataset|testing)\]")
    files = [n for n in _tracked_text_files() if n not in ("tests/unit/test_release.py", "CHANGELOG.md")]
    offenders = [n for n in files if bad.search((ROOT / n).read_text(encoding="utf-8"))]
    assert offenders == []
    for extra in ("otel", "dataset"):
        assert f"{DIST}[{extra}]" in README


def test_one_version_everywhere() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pitools.__version__"}
    assert __version__ == "0.4.0"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    # The newest release heading (an "Unreleased" section may come first) names this version.
    assert re.search(r"^## (?!Unreleased)(\S+)", changelog, re.M).group(1) == __version__  # type: ignore[union-attr]
    wheel = f"pi_session_tools-{__version__}-py3-none-any.whl"
    assert wheel in README


def test_installed_metadata_matches_the_source_version() -> None:
    from importlib.metadata import version

    assert version(DIST) == __version__


def test_pre_commit_snippets_point_at_this_release_tag() -> None:
    for path in ("README.md", ".pre-commit-hooks.yaml", "docs/validate.md", "docs/secrets.md"):
        revs = re.findall(r"rev: (\S+)", (ROOT / path).read_text(encoding="utf-8"))
        assert revs and set(revs) == {f"v{__version__}"}, path


def test_make_install_is_for_users_and_the_dev_tools_are_separate() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    user = makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "pip install -q -e ." in user and "--group" not in user
    dev = makefile.split("$(DEV_STAMP): $(STAMP)", 1)[1].split("\n\n", 1)[0]
    assert "--group dev" in dev
    for target in ("test", "lint"):
        assert re.search(rf"^{target}: \$\(DEV_STAMP\)$", makefile, re.M), target
    assert re.search(r"^run: \$\(STAMP\)$", makefile, re.M)
    assert any(d.startswith("build") for d in PYPROJECT["dependency-groups"]["dev"])


def test_ci_builds_the_wheel_installs_it_clean_and_runs_the_readme_setup() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # make check = lint + every test: the README's test command
    assert "make run" in ci and "make check" in ci and "make check-dist" in ci
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "python -m build" in makefile and "scripts/check_dist.sh" in makefile
    script = (ROOT / "scripts" / "check_dist.sh").read_text(encoding="utf-8")
    assert "python3 -m venv" in script and 'pitools" --version' in script and "inspect" in script
