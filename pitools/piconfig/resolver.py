"""Pi's configuration files, read once per run with Pi 1.6.0's error policy and their sources.

Every reader of Pi's configuration goes through :func:`load_pi_config` (or the three file readers
below, for a folder given explicitly), so that one broken file gets the same reaction from every
command. Pi's policy, checked by running Pi's own loaders under node (``tests/unit/piconfig/
test_broken_config.py`` records the answers):

* ``settings.json`` (agent folder, and ``<cwd>/.pi/settings.json`` where the project is trusted):
  a file that cannot be read or parsed is skipped with a warning, as if it were empty
  (``SettingsManager.loadFromStorage`` + ``drainErrors``). Unknown keys are kept and unused.
* ``models.json``: a file that cannot be read, is not JSON(C), or fails Pi's schema is dropped
  whole with a warning (``ModelConfig.load``); Pi carries on with its built-in catalogue. Unknown
  top-level keys pass the schema.
* ``auth.json``: Pi's session credential store (``AuthStorage.reload``) keeps an empty store when
  the file is not JSON, silently; pitools says so. An entry that is not an object is dropped; an
  entry of the wrong shape fails only when its provider's key is needed (for every provider,
  ``pi auth`` reading through ``ReadOnlyAuthStorage``).
* a missing file is an empty one, silently.

:class:`ConfigFile` says where each file is, whether it was read, and why it was skipped. Nothing
here writes.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from pitools import runscope
from pitools.errors import ConfigError
from pitools.piconfig.jsonc import parse_json, read_text, strip_json_comments
from pitools.piconfig.paths import CONFIG_DIR_NAME, agent_folder, project_settings_path
from pitools.piconfig.trust import TrustDecision, project_trust


class ConfigFile(NamedTuple):
    """One of Pi's configuration files as Pi would use it."""

    path: Path
    #: What Pi uses: ``{}`` for a missing or skipped file (``models.json``: its ``providers``).
    data: Mapping[str, Any]
    #: The file exists and was read (even when it was then skipped).
    read: bool = False
    #: Why Pi skips the file (or part of it), as pitools reports it; None when it is fine.
    problems: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return str(self.path)


def _parse_file(path: Path, skipped: str, *, empty_ok: bool, comments: bool = False) -> tuple[Any, ConfigFile | None]:
    """The file's JSON value, or (None, what to use instead) when it is missing or cannot be
    read or parsed. ``skipped`` words the problem (``{path}``, ``{message}``); ``empty_ok``: an
    empty file is an empty object (settings, auth), not a parse error (models.json)."""
    try:
        text = read_text(path)
    except ConfigError as exc:
        return None, ConfigFile(path, {}, False, (skipped.format(path=path, message=exc.message),))
    if text is None:
        return None, ConfigFile(path, {})
    if not text and empty_ok:  # Pi checks the content before dropping a BOM: a BOM alone fails to parse
        return None, ConfigFile(path, {}, True)
    text = text.removeprefix("\ufeff")
    try:
        return parse_json(strip_json_comments(text) if comments else text, path), None
    except ConfigError as exc:
        return None, ConfigFile(path, {}, True, (skipped.format(path=path, message=exc.message),))


def read_settings_file(path: Path) -> ConfigFile:
    """``SettingsManager.loadFromStorage`` for one settings file: a failure is a warning and ``{}``."""
    skipped = "Invalid settings file {path}: {message}"
    data, instead = _parse_file(path, skipped, empty_ok=True)
    if instead is not None:
        return instead
    if isinstance(data, dict):
        return ConfigFile(path, data, True)
    if isinstance(data, list):
        # migrateSettings accepts an array and the merge spreads it into index keys: no settings.
        return ConfigFile(path, {}, True)
    # migrateSettings starts with `"queueMode" in settings`, a TypeError for a primitive.
    message = f"Cannot use 'in' operator to search for 'queueMode' in {_js_primitive_string(data)}"
    return ConfigFile(path, {}, True, (skipped.format(path=path, message=message),))


def _js_primitive_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for what ``JSON.parse`` makes of a primitive."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        if value == 0:
            return "0"
        if 1e-6 <= abs(value) < 1e21:  # JS writes these positionally, with the shortest digits
            from decimal import Decimal

            text = format(Decimal(repr(value)), "f")
            return text.rstrip("0").rstrip(".") if "." in text else text
        mantissa, _, exponent = repr(value).partition("e")
        power = int(exponent)
        return f"{mantissa.removesuffix('.0')}e{'+' if power >= 0 else '-'}{abs(power)}"
    return str(value)


@cache
def models_schema_validator() -> Any:
    """Pi's ``ModelsConfigSchema`` (``pitools/data/models.schema.json``) as a JSON Schema validator."""
    from importlib import resources  # with tempfile, shutil, bz2, lzma: only when models.json is read

    import jsonschema  # type: ignore[import-untyped]

    text = (resources.files("pitools") / "data" / "models.schema.json").read_text(encoding="utf-8")
    base = jsonschema.Draft202012Validator

    def is_number(checker: Any, value: Any) -> bool:
        # TypeBox's Number rejects Infinity, which JSON.parse makes of a literal like 1e400.
        return base.TYPE_CHECKER.is_type(value, "number") and math.isfinite(value)

    checker = base.TYPE_CHECKER.redefine("number", is_number)
    return jsonschema.validators.extend(base, type_checker=checker)(json.loads(text))


def read_models_file(path: Path) -> ConfigFile:
    """``ModelConfig.load``: any error drops the whole file with a warning; ``data`` is ``providers``."""
    data, instead = _parse_file(path, "{path}: {message}; Pi ignores models.json", empty_ok=False, comments=True)
    if instead is not None:
        return instead
    errors = sorted(models_schema_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path) or "root"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        problem = f"{path}: invalid models.json schema: {where}: {first.message}{more}; Pi ignores models.json"
        return ConfigFile(path, {}, True, (problem,))
    return ConfigFile(path, data["providers"], True)


def read_auth_file(path: Path) -> ConfigFile:
    """``AuthStorage`` as a Pi session reads it: unparseable means no credentials, never a failure."""
    skipped = "{path}: {message}; Pi reads no credentials from it"
    data, instead = _parse_file(path, skipped, empty_ok=True)
    if instead is not None:
        return instead
    if not isinstance(data, dict):
        return ConfigFile(path, {}, True, (skipped.format(path=path, message="not a JSON object"),))
    problems: list[str] = []
    usable: dict[str, Any] = {}
    for provider, credential in data.items():
        shown = json.dumps(provider, ensure_ascii=False)
        if not isinstance(credential, dict):
            problems.append(f"{path}: the credential for provider {shown} is not an object; ignored")
            continue
        # Pi's store keeps such an entry and fails only when that provider's key is asked for.
        if not usable_credential(credential):
            problems.append(f"{path}: the credential for provider {shown} is not one Pi can use")
        usable[provider] = credential
    return ConfigFile(path, usable, True, tuple(problems))


def read_models_store_file(path: Path) -> ConfigFile:
    """``models-store.json``, the pi.dev catalogues Pi caches per provider (``ModelsImpl.refresh``):
    a file Pi cannot parse leaves every provider on its built-in catalogue, with a warning."""
    data, instead = _parse_file(path, "{path}: {message}; Pi cannot use its cached model catalogues", empty_ok=True)
    if instead is not None:
        return instead
    return ConfigFile(path, data if isinstance(data, dict) else {}, True)


def usable_credential(credential: Any) -> bool:
    """An ``api_key`` entry with a string ``key`` and string ``env`` values, or an ``oauth`` login."""
    if not isinstance(credential, dict):
        return False
    kind = credential.get("type")
    if kind == "api_key":
        key, env = credential.get("key"), credential.get("env")
        key_ok = key is None or isinstance(key, str)
        env_ok = env is None or (isinstance(env, dict) and all(isinstance(v, str) for v in env.values()))
        return key_ok and env_ok
    return kind == "oauth"


class ProjectSettings(NamedTuple):
    """A project's ``.pi/settings.json`` and Pi's trust decision for it."""

    file: ConfigFile
    trust: TrustDecision
    #: ``trust.json`` when it was consulted.
    trust_files: tuple[Path, ...] = ()

    @property
    def applied(self) -> bool:
        return self.trust.trusted


class PiConfig(NamedTuple):
    """Pi's configuration for one run: built once (:func:`load_pi_config`), passed to every reader."""

    #: Pi's agent folder (absolute).
    agent_dir: Path
    #: False with ``--no-config``: no file is read and every file below is empty.
    use_config: bool
    settings: ConfigFile
    models: ConfigFile
    auth: ConfigFile
    #: ``models-store.json``: the cached catalogues that overlay the built-in one.
    models_store: ConfigFile

    @property
    def files(self) -> tuple[ConfigFile, ...]:
        return (self.settings, self.models, self.auth)

    @property
    def warnings(self) -> list[str]:
        return [problem for f in self.files for problem in f.problems]

    def project_settings(
        self, cwd: str, env: Mapping[str, str], override: bool | None = None
    ) -> ProjectSettings | None:
        """``<cwd>/.pi/settings.json`` with Pi's trust decision (None: no such file, or ``--no-config``).

        Raises ConfigError where Pi stops: an unreadable ``trust.json``.
        """
        if not self.use_config:
            return None
        path = Path(project_settings_path(cwd, env))
        if not path.exists():
            return None
        consulted: list[Path] = []
        trust = project_trust(str(path.parent.parent), self.agent_dir, dict(self.settings.data), override, consulted)
        layer = read_settings_file(path) if trust.trusted else ConfigFile(path, {})
        return ProjectSettings(layer, trust, tuple(consulted))


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _load(folder: Path, use_config: bool) -> PiConfig:
    if not use_config:
        names = ("settings.json", "models.json", "auth.json", "models-store.json")
        empty = [ConfigFile(folder / name, {}) for name in names]
        return PiConfig(folder, False, *empty)
    return PiConfig(
        folder,
        True,
        read_settings_file(folder / "settings.json"),
        read_models_file(folder / "models.json"),
        read_auth_file(folder / "auth.json"),
        read_models_store_file(folder / "models-store.json"),
    )


#: The run the memo belongs to, and what it read: (folder, use_config) → (file signatures, PiConfig).
_memo: tuple[object | None, dict[tuple[Path, bool], tuple[Any, PiConfig]]] = (None, {})


def load_pi_config(env: Mapping[str, str] | None = None, *, use_config: bool = True) -> PiConfig:
    """Pi's configuration for ``env``'s agent folder (:func:`load_folder`)."""
    return load_folder(agent_folder(os.environ if env is None else env), use_config=use_config)


def load_folder(folder: Path, *, use_config: bool = True) -> PiConfig:
    """Pi's configuration in the agent folder ``folder``, read once per run (:mod:`pitools.runscope`):
    every reader in a ``pitools`` run gets the same object while the files look unchanged (a
    long run such as ``serve`` sees an edit). Outside a run (a library call, a test) the files
    are read on every call."""
    global _memo
    scope = runscope.current()
    if scope is None:
        return _load(folder, use_config)
    if _memo[0] is not scope:
        _memo = (scope, {})
    names = ("settings.json", "models.json", "auth.json", "models-store.json", "trust.json")
    signatures = tuple(_signature(folder / name) for name in names) if use_config else ()
    found = _memo[1].get((folder, use_config))
    if found is None or found[0] != signatures:
        found = _memo[1][(folder, use_config)] = (signatures, _load(folder, use_config))
    return found[1]


__all__ = [
    "CONFIG_DIR_NAME",
    "ConfigFile",
    "PiConfig",
    "ProjectSettings",
    "load_folder",
    "load_pi_config",
    "models_schema_validator",
    "read_auth_file",
    "read_models_file",
    "read_models_store_file",
    "read_settings_file",
    "usable_credential",
]
