"""Compaction settings and the context window, resolved the way Pi 1.6.0 resolves them, with provenance.

Compaction settings (``SettingsManager.getCompactionSettings`` in ``core/settings-manager.js``):

* two settings files: the agent directory's ``settings.json`` and the project's
  ``<session cwd>/.pi/settings.json``, deep-merged with the project winning (objects merge key by
  key, anything else -- arrays too -- replaces). The project file is read only when the project
  is trusted (``core/trust-manager.js``, ``core/project-trust.js``, ``createRuntime`` in
  ``main.js``);
* a settings file that cannot be read or parsed is skipped with a warning, as if it were empty;
* ``compaction.reserveTokens`` / ``keepRecentTokens`` resolve independently: the session model's
  ``compaction.modelOverrides["<provider>/<modelId>"]`` entry, then the plain setting, then the
  default (16384 / 20000). Pi checks each value only when it reads it and throws on one that is
  not a non-negative safe integer, so that is a :class:`ConfigError` here;
* ``compaction.enabled`` is not checked at all: Pi uses the value's truthiness.

The context window is ``model.contextWindow`` of the session model as Pi's model runtime builds it
(``core/model-runtime.js``, ``core/provider-composer.js``, ``core/remote-catalog-provider.js``):
pi-ai's built-in catalogue, overlaid by the pi.dev catalogue cached in ``models-store.json``, then
``models.json`` custom models and ``modelOverrides``.

pitools' own flags (``--reserve-tokens``, ``--keep-recent-tokens``, ``--context-window``) override
everything; with ``use_config=False`` (``--no-config``) no file is read at all.

Out of reach offline, and reported as warnings where they matter: extensions (they can register
providers, answer the project-trust question, or add virtual models), and Pi's refusal to restore
a session model whose provider has no credentials. For a model Pi would not know at all, Pi picks
another model at startup; pitools cannot know which and uses 128000 tokens.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pitools import piconfig
from pitools.core.js.date import js_date_ms
from pitools.core.js.types import JsonObject, JsValue
from pitools.core.js.value import JSTypeError, js_to_string, js_truthy
from pitools.errors import ConfigError
from pitools.piconfig.jsonc import load_json_file, parse_json, strip_json_comments
from pitools.piconfig.resolver import ConfigFile, PiConfig, load_pi_config, read_settings_file

if TYPE_CHECKING:
    from pitools.core.compaction.prepare import CompactionSettings

__all__ = [
    "AGENT_DIR_ENV",
    "DEFAULT_CONTEXT_WINDOW",
    "DefaultModelSetting",
    "ResolvedSettings",
    "Sourced",
    "agent_dir",
    "builtin_model_limits",
    "load_json_file",
    "parse_json",
    "resolve_settings",
    "strip_json_comments",
]

AGENT_DIR_ENV = piconfig.ENV_AGENT_DIR
CONFIG_DIR_NAME = piconfig.CONFIG_DIR_NAME

# SETTINGS_DEFAULTS.compaction in core/settings-defaults.js.
DEFAULT_ENABLED = True
DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
#: What Pi gives a models.json model without ``contextWindow`` (``modelFromJson``); pitools also
#: falls back to it for a model Pi would not know (see ``_context_window``).
DEFAULT_CONTEXT_WINDOW = 128000
MAX_SAFE_INTEGER = 2**53 - 1

SOURCE_DEFAULT = "default"
SOURCE_PI_DEFAULT = "Pi default"
SOURCE_CATALOGUE = "built-in model catalogue"

_FLAG_NAMES = {
    "reserve_tokens": "--reserve-tokens",
    "keep_recent_tokens": "--keep-recent-tokens",
    "context_window": "--context-window",
    "branch_reserve_tokens": "--reserve-tokens",
}
_RADIUS_DEFAULT_GATEWAY = "https://radius.pi.dev"
_KNOWN_MODEL_TYPES = ("chat", "image", "classifier")
_ASK = "Pi default (ask; untrusted without an answer)"


@dataclass(frozen=True)
class Sourced:
    """A value and where it came from."""

    value: Any
    source: str

    def to_json(self) -> JsonObject:
        return {"value": self.value, "source": self.source}


@dataclass(frozen=True)
class DefaultModelSetting:
    """``defaultProvider`` / ``defaultModel`` of the merged settings (``SettingsManager.
    getDefaultProvider``/``getDefaultModel``: the project's file where it is trusted), the model
    Pi starts a session with when the session names none it can use. Raw JSON values (None when
    unset; Pi checks nothing) and the file each came from."""

    provider: Any = None
    model: Any = None
    provider_file: str | None = None
    model_file: str | None = None


def _default_model(merged: _Obj) -> DefaultModelSetting:
    provider, model = merged.get("defaultProvider"), merged.get("defaultModel")
    return DefaultModelSetting(
        _raw(provider),
        _raw(model),
        None if provider is None else provider.path,
        None if model is None else model.path,
    )


@dataclass(frozen=True)
class ResolvedSettings:
    """The compaction settings and context window Pi 1.6.0 would use for a session."""

    enabled: Sourced
    reserve_tokens: Sourced
    keep_recent_tokens: Sourced
    context_window: Sourced
    #: Pi's agent folder; None with ``use_config=False``, which reads nothing from it (so a
    #: ``--no-config`` plan is the same document on every machine).
    agent_dir: Path | None
    files_read: list[Path] = field(default_factory=list)
    #: Whether the project's ``.pi/settings.json`` applies; None when there is no such file.
    project_trusted: Sourced | None = None
    #: Things Pi would warn about or silently ignore, and places where pitools has to guess.
    warnings: list[str] = field(default_factory=list)
    #: ``branchSummary.reserveTokens``: what tree navigation keeps free of the context window.
    branch_reserve_tokens: Sourced = field(default_factory=lambda: Sourced(16384, SOURCE_DEFAULT))
    #: The model Pi falls back to (the summarizer's default when ``--model`` and the session name none).
    default_model: DefaultModelSetting = field(default_factory=DefaultModelSetting)

    def compaction_settings(self) -> CompactionSettings:
        from pitools.core.compaction.prepare import CompactionSettings

        return CompactionSettings(
            reserve_tokens=self.reserve_tokens.value,
            keep_recent_tokens=self.keep_recent_tokens.value,
            enabled=self.enabled.value,
        )

    def to_json(self) -> JsonObject:
        return {
            "enabled": self.enabled.to_json(),
            "reserveTokens": self.reserve_tokens.to_json(),
            "keepRecentTokens": self.keep_recent_tokens.to_json(),
            "contextWindow": self.context_window.to_json(),
            "projectTrusted": None if self.project_trusted is None else self.project_trusted.to_json(),
            "agentDir": None if self.agent_dir is None else str(self.agent_dir),
            "filesRead": [str(p) for p in self.files_read],
            "warnings": list(self.warnings),
        }


# --------------------------------------------------------------------------------------------------
# paths


def _resolve_path(raw: str, env: Mapping[str, str]) -> str:
    """Pi's ``resolvePath`` against the process's working directory."""
    return piconfig.resolve_path(raw, os.getcwd(), env)


#: The agent directory (Pi's ``getAgentDir``), absolute: see :mod:`pitools.piconfig`.
agent_dir = piconfig.agent_folder


# --------------------------------------------------------------------------------------------------
# settings layers


class _Leaf:
    """A non-object value from one settings file."""

    __slots__ = ("path", "source", "value")

    def __init__(self, value: JsValue, source: str, path: str) -> None:
        self.value = value
        self.source = source
        self.path = path


class _Obj(dict[str, Any]):
    """An object from the merged settings; ``source``/``path`` name the last file that shaped it."""

    source: str
    path: str


def _wrap(value: JsValue, source: str, path: str) -> Any:
    if isinstance(value, dict):
        obj = _Obj((k, _wrap(v, source, path)) for k, v in value.items())
        obj.source, obj.path = source, path
        return obj
    return _Leaf(value, source, path)


def _merge(base: _Obj, over: _Obj) -> _Obj:
    """``deepMergeObjects``: objects merge recursively, any other value (arrays too) replaces."""
    result = _Obj(base)
    result.source, result.path = over.source, over.path
    for key, value in over.items():
        old = base.get(key)
        result[key] = _merge(old, value) if isinstance(old, _Obj) and isinstance(value, _Obj) else value
    return result


def _get(obj: Any, key: str) -> Any:
    """``obj?.[key]`` for our keys: None for undefined; a non-object has none of them."""
    return obj.get(key) if isinstance(obj, _Obj) else None


def _raw(node: Any) -> Any:
    return node.value if isinstance(node, _Leaf) else node


def _js_string(node: Any) -> str:
    try:
        return js_to_string(_raw(node))
    except JSTypeError:
        return "[object with its own toString]"


def _load_settings_file(path: Path, warnings: list[str], files_read: list[Path]) -> dict[str, Any]:
    """One settings file under Pi's policy (:func:`pitools.piconfig.resolver.read_settings_file`)."""
    return _take(read_settings_file(path), warnings, files_read)


def _take(file: ConfigFile, warnings: list[str], files_read: list[Path]) -> dict[str, Any]:
    """A file of the run's :class:`PiConfig`: note that it was read and why Pi skipped it."""
    if file.read:
        files_read.append(file.path)
    warnings.extend(file.problems)
    return dict(file.data)


# --------------------------------------------------------------------------------------------------
# project trust


# --------------------------------------------------------------------------------------------------
# compaction settings


def _is_safe_non_negative(node: Any) -> bool:
    """``typeof v === "number" && Number.isSafeInteger(v) && v >= 0``."""
    if not isinstance(node, _Leaf):
        return False
    v = node.value
    if type(v) is int:
        return 0 <= v <= MAX_SAFE_INTEGER
    if type(v) is float:
        return v.is_integer() and 0 <= v <= MAX_SAFE_INTEGER
    return False


def _check_flag(name: str, value: JsValue, *, minimum: int) -> int:
    if type(value) is not int or not minimum <= value <= MAX_SAFE_INTEGER:
        kind = "a positive" if minimum > 0 else "a non-negative"
        raise ConfigError(f"{_FLAG_NAMES[name]} must be {kind} integer, got {value!r}")
    return value


def _token_setting(name: str, compaction: Any, model_key: str | None, flag: int | None, warnings: list[str]) -> Sourced:
    """``getCompactionTokenSetting``: model override, then the plain setting, then the default."""
    setting = "reserveTokens" if name == "reserve_tokens" else "keepRecentTokens"
    expected = "Expected a non-negative safe integer."
    problems: list[tuple[str, str]] = []  # (message, file), in the order Pi checks them
    ordinary = _get(compaction, setting)
    if ordinary is not None and not _is_safe_non_negative(ordinary):
        problems.append((f"Invalid compaction.{setting} setting: {_js_string(ordinary)}. {expected}", ordinary.path))
    entry = _get(_get(compaction, "modelOverrides"), model_key) if model_key is not None else None
    override = None
    if entry is not None and not isinstance(entry, _Obj):
        message = f'Invalid compaction.modelOverrides["{model_key}"] setting: {_js_string(entry)}. Expected an object.'
        problems.append((message, entry.path))
    else:
        override = _get(entry, setting)
        if override is not None and not _is_safe_non_negative(override):
            message = (
                f'Invalid compaction.modelOverrides["{model_key}"].{setting} setting: '
                f"{_js_string(override)}. {expected}"
            )
            problems.append((message, override.path))
    if flag is not None:
        value = _check_flag(name, flag, minimum=0)
        for message, path in problems[:1]:
            warnings.append(f"{path}: {message} (Pi 1.6.0 stops here; {_FLAG_NAMES[name]} overrides it)")
        return Sourced(value, f"flag {_FLAG_NAMES[name]}")
    if problems:
        message, path = problems[0]
        raise ConfigError(message, path=path)
    if override is not None:
        return Sourced(int(override.value), f"modelOverrides[{model_key}] in {override.path}")
    if ordinary is not None:
        return Sourced(int(ordinary.value), ordinary.source)
    default = DEFAULT_RESERVE_TOKENS if name == "reserve_tokens" else DEFAULT_KEEP_RECENT_TOKENS
    return Sourced(default, SOURCE_DEFAULT)


def _enabled(compaction: Any, warnings: list[str]) -> Sourced:
    """``getCompactionEnabled``: ``compaction?.enabled ?? true``, never validated, used for truthiness."""
    node = _get(compaction, "enabled")
    if node is None or _raw(node) is None:
        return Sourced(DEFAULT_ENABLED, SOURCE_DEFAULT)
    raw = _raw(node)
    value = True if isinstance(node, _Obj) else js_truthy(raw)
    if type(raw) is not bool:
        shown = "an object" if isinstance(node, _Obj) else json.dumps(raw)
        warnings.append(
            f"{node.path}: compaction.enabled is {shown}, not true/false; Pi 1.6.0 does not check it and "
            f"treats it as {str(value).lower()}"
        )
    return Sourced(value, node.source)


def _branch_reserve(section: Any, flag: int | None, warnings: list[str]) -> Sourced:
    """``getBranchSummarySettings().reserveTokens``: ``branchSummary?.reserveTokens ?? 16384``.

    Pi does not check the value: whatever is stored is subtracted from the context window (a
    string or an object gives NaN, and then no budget at all). pitools warns about such values.
    """
    if flag is not None:
        return Sourced(_check_flag("branch_reserve_tokens", flag, minimum=0), "flag --reserve-tokens")
    node = _get(section, "reserveTokens")
    if node is None or _raw(node) is None:
        return Sourced(DEFAULT_RESERVE_TOKENS, SOURCE_DEFAULT)
    raw = _raw(node)
    if type(raw) not in (int, float) or isinstance(node, _Obj):
        warnings.append(
            f"{node.path}: branchSummary.reserveTokens is {_js_string(node)!r}, not a number; Pi 1.6.0 does not "
            "check it, the budget becomes NaN and Pi summarizes the whole branch"
        )
        return Sourced(float("nan"), node.source)
    return Sourced(int(raw) if float(raw).is_integer() else raw, node.source)


def _check_shapes(compaction: Any, warnings: list[str]) -> None:
    # Pi reads through these without complaint; say why a setting seems to have no effect.
    if compaction is not None and not isinstance(compaction, _Obj):
        warnings.append(f"{compaction.path}: compaction is {_js_string(compaction)!r}, not an object; Pi ignores it")
        return
    overrides = _get(compaction, "modelOverrides")
    if overrides is not None and not isinstance(overrides, _Obj):
        warnings.append(f"{overrides.path}: compaction.modelOverrides is not an object; Pi ignores it")


# --------------------------------------------------------------------------------------------------
# context window


def _builtin_table() -> dict[str, Any]:
    from pitools.piconfig.catalog import model_limits_table

    return model_limits_table()


def builtin_model_limits(provider: str, model_id: str) -> tuple[int, int] | None:
    """``(contextWindow, maxTokens)`` of a chat model in pi-ai 1.6.0's built-in catalogue, or None."""
    limits = _builtin_table()["providers"].get(provider, {}).get(model_id)
    return None if limits is None else (limits[0], limits[1])


# One chat model in Pi's list for a provider: id, contextWindow, where the value came from.
_Model = tuple[Any, Any, str]


class _Stored:
    """One provider's entry in ``models-store.json``: its usable models and ``lastModified``."""

    __slots__ = ("last_modified", "models")

    def __init__(self, models: list[dict[str, Any]], last_modified: Any) -> None:
        self.models = models
        self.last_modified = last_modified


def _stored_entry(store: ConfigFile, provider: str, warnings: list[str], files_read: list[Path]) -> _Stored | None:
    """The provider's cached catalogue in ``models-store.json`` as ``ModelsImpl.refresh`` reads it."""
    path = store.path
    data = _take(store, warnings, files_read)
    entry = data.get(provider) if isinstance(data, dict) else None
    if not js_truthy(entry):
        return None
    models = entry.get("models") if isinstance(entry, dict) else None
    if not isinstance(models, list) or any(m is None for m in models):
        # withKnownModelTypes throws on these, so the provider's refresh fails.
        warnings.append(f'{path}: malformed entry for provider "{provider}"; Pi ignores it')
        return None
    # withKnownModelTypes, then the provider filter every overlay applies.
    usable = [
        m
        for m in models
        if isinstance(m, dict) and _model_type(m) in _KNOWN_MODEL_TYPES and m.get("provider") == provider
    ]
    return _Stored(usable, entry.get("lastModified"))  # type: ignore[union-attr]


def _model_type(model: dict[str, Any]) -> Any:
    """pi-ai's ``getModelType``: ``model.type ?? "chat"``."""
    kind = model.get("type")
    return "chat" if kind is None else kind


def _chat(models: list[Any], source: str) -> list[_Model]:
    return [(m.get("id"), m.get("contextWindow"), source) for m in models if _model_type(m) == "chat"]


def _radius_gateway_is_default(base_url: str) -> bool:
    gateway = re.sub(r"/v1/?$", "", base_url)
    gateway = gateway if re.match(r"https?://", gateway, re.IGNORECASE) else f"https://{gateway}"
    return gateway.rstrip("/") == _RADIUS_DEFAULT_GATEWAY


def _base_models(
    provider: str,
    config: dict[str, Any] | None,
    pi_config: PiConfig,
    warnings: list[str],
    files_read: list[Path],
) -> list[_Model]:
    """The provider's chat models before models.json: built-in catalogue plus the cached overlay."""
    table = _builtin_table()
    if config is not None and config.get("oauth") == "radius" and config.get("baseUrl"):
        # configureRadiusProviders: a models.json Radius login replaces the built-in provider; only the
        # default gateway starts from the shipped Radius catalogue.
        radius = True
        shipped = table["providers"]["radius"] if _radius_gateway_is_default(config["baseUrl"]) else {}
    elif provider in table["providers"]:
        radius = provider == "radius"
        shipped = table["providers"][provider]
    else:
        return []  # no built-in provider: nothing to refresh from models-store.json either
    baseline: list[_Model] = [(mid, limits[0], SOURCE_CATALOGUE) for mid, limits in shipped.items()]
    stored = _stored_entry(pi_config.models_store, provider, warnings, files_read) if pi_config.use_config else None
    if stored is None:
        return baseline
    overlay = f"cached model catalogue: {pi_config.models_store.path}"
    if radius:
        return _chat(stored.models, overlay)  # a stored Radius catalogue replaces the shipped one
    if provider == "openrouter":
        # withPersonalizedCatalog: a non-empty stored list replaces the catalogue.
        return _chat(stored.models, overlay) if stored.models else baseline
    # withRemoteCatalog: only a catalogue newer than the shipped one counts, and it overlays by id.
    # (Pi writes lastModified as a number; anything else is taken as "not newer".)
    last_modified = stored.last_modified
    if type(last_modified) not in (int, float) or not last_modified > js_date_ms(table["generatedAt"]):
        return baseline
    merged: dict[Any, _Model] = {m[0]: m for m in baseline}
    for model in _chat(stored.models, overlay):
        merged[model[0]] = model
    return list(merged.values())


def _apply_models_json(models: list[_Model], config: dict[str, Any], path: Path) -> list[_Model]:
    """``applyModelsJson``: custom models replace or join the list. Raises ValueError like Pi's composer."""
    if config.get("oauth") and not config.get("baseUrl"):
        raise ValueError('"baseUrl" is required when "oauth" is set.')
    # The schema already rules out empty strings, so presence is truthiness here.
    keys = ("baseUrl", "headers", "compat", "apiKey", "oauth", "authHeader")
    if not config.get("models") and not config.get("modelOverrides") and not any(k in config for k in keys):
        raise ValueError('must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".')
    result = list(models)
    for definition in config.get("models", []):
        model_id = definition["id"]
        # Without a model to borrow from, api and baseUrl must be given (findModelDefaults).
        if not result and "api" not in definition and "api" not in config:
            raise ValueError(f'model {model_id}: no "api" specified. Set at provider or model level.')
        if not result and "baseUrl" not in definition and "baseUrl" not in config:
            raise ValueError('"baseUrl" is required when defining custom models.')
        if "contextWindow" in definition:
            entry: _Model = (model_id, definition["contextWindow"], f"models.json: {path}")
        else:
            # A custom entry replaces a built-in model whole: its contextWindow is not inherited.
            entry = (model_id, DEFAULT_CONTEXT_WINDOW, f"Pi default for models.json models ({path})")
        index = next((i for i, m in enumerate(result) if m[0] == model_id), None)
        if index is None:
            result.append(entry)
        else:
            result[index] = entry
    return result


def _context_window(
    model: tuple[str, str] | None,
    flag: int | None,
    pi_config: PiConfig,
    warnings: list[str],
    files_read: list[Path],
) -> Sourced:
    if flag is not None:
        return Sourced(_check_flag("context_window", flag, minimum=1), "flag --context-window")
    if model is None:
        warnings.append(
            f"the session names no model; Pi would pick one at startup; using {DEFAULT_CONTEXT_WINDOW} tokens"
        )
        return Sourced(DEFAULT_CONTEXT_WINDOW, SOURCE_PI_DEFAULT)
    provider, model_id = model
    providers, models_path = _take(pi_config.models, warnings, files_read), pi_config.models.path
    config = providers.get(provider)
    models = _base_models(provider, config, pi_config, warnings, files_read)
    if config is not None:
        try:
            models = _apply_models_json(models, config, models_path)
        except ValueError as exc:
            # composeProvider keeps the provider without its models.json layer.
            warnings.append(f'{models_path}: provider "{provider}": {exc} Pi ignores this provider\'s entry')
            config = None
    found = next((m for m in models if m[0] == model_id), None)
    if found is None:
        warnings.append(
            f"model {provider}/{model_id} is unknown to Pi 1.6.0 (built-in catalogue, models.json); "
            "Pi would not restore it and would fall back to another model; "
            f"using {DEFAULT_CONTEXT_WINDOW} tokens"
        )
        return Sourced(DEFAULT_CONTEXT_WINDOW, SOURCE_PI_DEFAULT)
    _, value, source = found
    override = (config or {}).get("modelOverrides", {}).get(model_id)
    if override is not None and "contextWindow" in override:
        value, source = override["contextWindow"], f"models.json: {models_path}"
    if type(value) not in (int, float) or not value > 0:
        warnings.append(
            f"{source}: contextWindow of {provider}/{model_id} is {json.dumps(value)}; Pi treats the "
            "model as having no context window and never compacts on the threshold"
        )
        return Sourced(0, source)
    return Sourced(int(value) if float(value).is_integer() else value, source)


# --------------------------------------------------------------------------------------------------
# entry point


def _merged_settings(
    config: PiConfig,
    session_cwd: str | None,
    env: Mapping[str, str],
    project_trust: bool | None,
    warnings: list[str],
    files_read: list[Path],
) -> tuple[_Obj, Sourced | None]:
    """Pi's settings as ``SettingsManager.create`` merges them: the agent folder's
    ``settings.json``, then the project's ``.pi/settings.json`` where the project is trusted."""
    merged = _Obj()
    merged.source, merged.path = SOURCE_DEFAULT, ""
    trusted: Sourced | None = None
    if not config.use_config:
        return merged, trusted
    global_path = config.settings.path
    merged = _wrap(_take(config.settings, warnings, files_read), f"agent settings: {global_path}", str(global_path))
    project = config.project_settings(session_cwd, env, project_trust) if session_cwd is not None else None
    if project is None:
        return merged, trusted
    files_read.extend(project.trust_files)
    decision = project.trust
    trusted = Sourced(decision.trusted, _ASK if decision.asked else decision.source)
    project_path = project.file.path
    if decision.trusted:
        layer = _wrap(_take(project.file, warnings, files_read), f"project settings: {project_path}", str(project_path))
        merged = _merge(merged, layer)
    elif decision.asked:
        warnings.append(
            f"project settings {project_path} not applied: no trust decision is recorded for "
            f"{project_path.parent.parent}; interactive Pi would ask, other modes ignore the file (trust the "
            "project in Pi, or pass --approve)"
        )
    elif project_trust is None:
        warnings.append(f"project settings {project_path} not applied: {decision.source} says no")
    return merged, trusted


def resolve_settings(
    *,
    session_cwd: str | None,
    model: tuple[str, str] | None,
    flags: Mapping[str, int | None],
    use_config: bool = True,
    env: Mapping[str, str] | None = None,
    project_trust: bool | None = None,
) -> ResolvedSettings:
    """Resolve compaction settings and the context window as Pi 1.6.0 would for a session.

    Mirrors ``SettingsManager.create`` + ``getCompactionSettings(model)`` and ``model.contextWindow``
    from ``ModelRuntime``. ``model`` is the session's ``(provider, modelId)`` at the leaf; ``flags``
    holds pitools' ``reserve_tokens``, ``keep_recent_tokens`` and ``context_window`` (None = unset);
    ``project_trust`` is Pi's ``--approve`` (True) / ``--no-approve`` (False). Raises ConfigError
    where Pi would stop (an invalid compaction token setting, an unreadable ``trust.json``).
    """
    unknown = set(flags) - set(_FLAG_NAMES)
    if unknown:
        raise ValueError(f"unknown flags: {sorted(unknown)}")
    env = os.environ if env is None else env
    config = load_pi_config(env, use_config=use_config)
    agent = config.agent_dir
    warnings: list[str] = []
    files_read: list[Path] = []
    model_key = f"{model[0]}/{model[1]}" if model is not None else None

    merged, trusted = _merged_settings(config, session_cwd, env, project_trust, warnings, files_read)

    compaction = merged.get("compaction")
    _check_shapes(compaction, warnings)
    enabled = _enabled(compaction, warnings)
    reserve = _token_setting("reserve_tokens", compaction, model_key, flags.get("reserve_tokens"), warnings)
    keep = _token_setting("keep_recent_tokens", compaction, model_key, flags.get("keep_recent_tokens"), warnings)
    window = _context_window(model, flags.get("context_window"), config, warnings, files_read)
    branch_reserve = _branch_reserve(merged.get("branchSummary"), flags.get("branch_reserve_tokens"), warnings)
    return ResolvedSettings(
        enabled=enabled,
        reserve_tokens=reserve,
        keep_recent_tokens=keep,
        context_window=window,
        agent_dir=agent if use_config else None,
        files_read=files_read,
        project_trusted=trusted,
        warnings=warnings,
        branch_reserve_tokens=branch_reserve,
        default_model=_default_model(merged),
    )


# --------------------------------------------------------------------------------------------------
# the settings that change a request body (pitools request)

#: The levels Pi's settings schema allows for ``defaultThinkingLevel``.
_SETTING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_BUDGET_LEVELS = ("minimal", "low", "medium", "high")


@dataclass(frozen=True)
class RequestSettings:
    """``defaultThinkingLevel`` and ``thinkingBudgets`` as Pi 1.6.0 would read them for a session
    (each None when no file sets it), and what was read to learn that."""

    default_thinking_level: Sourced | None
    thinking_budgets: Sourced | None
    files_read: list[Path] = field(default_factory=list)
    project_trusted: Sourced | None = None
    warnings: list[str] = field(default_factory=list)


def _budgets(node: Any, warnings: list[str]) -> Sourced | None:
    if node is None:
        return None
    where = f"{node.source}: thinkingBudgets"
    if not isinstance(node, _Obj):
        # pi-ai spreads the value over its defaults: anything but an object adds no level.
        warnings.append(f"{where} is {_js_string(node)!r}, not an object; Pi uses pi-ai's default budgets")
        return None
    budgets: dict[str, float] = {}
    for level in _BUDGET_LEVELS:
        if level not in node:
            continue
        value = _raw(node[level])
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise ConfigError(
                f"{where}.{level} is {_js_string(node[level])}; pi-ai would do arithmetic on it and send a "
                "broken request (set a number of tokens, or remove it)"
            )
        budgets[level] = value
    return Sourced(budgets, node.source) if budgets else None


def resolve_request_settings(
    *,
    session_cwd: str | None,
    use_config: bool = True,
    env: Mapping[str, str] | None = None,
    project_trust: bool | None = None,
) -> RequestSettings:
    """Pi's ``getDefaultThinkingLevel()`` and ``getThinkingBudgets()`` for a session, from the same
    merged settings files as :func:`resolve_settings`. Raises ConfigError on a value pi-ai would
    turn into a broken request (a level Pi does not have, a budget that is not a number)."""
    env = os.environ if env is None else env
    config = load_pi_config(env, use_config=use_config)
    warnings: list[str] = []
    files_read: list[Path] = []
    merged, trusted = _merged_settings(config, session_cwd, env, project_trust, warnings, files_read)
    # The request's model comes from the catalogue and models.json: say when Pi would skip the file.
    _take(config.models, warnings, files_read)
    level_node = merged.get("defaultThinkingLevel")
    level: Sourced | None = None
    if level_node is not None:
        value = _raw(level_node)
        if value not in _SETTING_LEVELS:
            raise ConfigError(
                f"{level_node.source}: defaultThinkingLevel is {_js_string(level_node)!r}, not one of "
                f"{', '.join(_SETTING_LEVELS)} (pass --thinking, or fix the setting)"
            )
        level = Sourced(value, level_node.source)
    return RequestSettings(
        default_thinking_level=level,
        thinking_budgets=_budgets(merged.get("thinkingBudgets"), warnings),
        files_read=files_read,
        project_trusted=trusted,
        warnings=warnings,
    )
