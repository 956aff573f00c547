"""Compaction settings and context window resolution (pitools.core.compaction.settings) against Pi 1.6.0's rules.

Every test builds its own agent directory and project under tmp_path and passes an explicit env,
so the real home directory is never read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pitools.core.compaction.prepare import CompactionSettings
from pitools.core.compaction.settings import (
    DEFAULT_CONTEXT_WINDOW,
    agent_dir,
    builtin_model_limits,
    load_json_file,
    resolve_settings,
    strip_json_comments,
)
from pitools.errors import ConfigError

MODEL = ("anthropic", "claude-fable-5")
KEY = "anthropic/claude-fable-5"
CATALOGUE_WINDOW = 1_000_000  # pi-ai 1.6.0: anthropic/claude-fable-5
SOURCE_PI_DEFAULT = "Pi default"


class Env:
    """An isolated home, agent directory and project directory."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.agent = root / "agent"
        self.project = root / "project"
        for d in (self.home, self.agent, self.project):
            d.mkdir()
        self.env = {"HOME": str(self.home), "PI_CODING_AGENT_DIR": str(self.agent)}

    @property
    def agent_settings(self) -> Path:
        return self.agent / "settings.json"

    @property
    def project_settings(self) -> Path:
        return self.project / ".pi" / "settings.json"

    def write(self, path: Path, content: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return path

    def resolve(self, **kwargs: Any) -> Any:
        kwargs.setdefault("session_cwd", str(self.project))
        kwargs.setdefault("model", MODEL)
        kwargs.setdefault("flags", {})
        return resolve_settings(env=self.env, **kwargs)


@pytest.fixture
def pi(tmp_path: Path) -> Env:
    return Env(tmp_path)


def values(resolved: Any) -> tuple[Any, ...]:
    return (
        resolved.enabled.value,
        resolved.reserve_tokens.value,
        resolved.keep_recent_tokens.value,
        resolved.context_window.value,
    )


# --- agent directory --------------------------------------------------------------------------------


def test_agent_dir_default_env_and_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = str(tmp_path / "h")
    assert agent_dir({"HOME": home}) == Path(home) / ".pi" / "agent"
    assert agent_dir({"HOME": home, "PI_CODING_AGENT_DIR": ""}) == Path(home) / ".pi" / "agent"
    assert agent_dir({"HOME": home, "PI_CODING_AGENT_DIR": "~"}) == Path(home)
    assert agent_dir({"HOME": home, "PI_CODING_AGENT_DIR": "~/x/../cfg/"}) == Path(home) / "cfg"
    # `~user` is not expanded; a relative path resolves against the process cwd.
    monkeypatch.chdir(tmp_path)
    assert agent_dir({"HOME": home, "PI_CODING_AGENT_DIR": "rel"}) == tmp_path / "rel"
    assert agent_dir({"HOME": home, "PI_CODING_AGENT_DIR": "~x"}) == tmp_path / "~x"
    assert agent_dir({"HOME": home, "PI_CODING_AGENT_DIR": "file:///a/b%20c"}) == Path("/a/b c")


# --- compaction settings --------------------------------------------------------------------------


def test_defaults_only(pi: Env) -> None:
    r = pi.resolve()
    assert values(r) == (True, 16384, 20000, CATALOGUE_WINDOW)
    assert [r.enabled.source, r.reserve_tokens.source, r.keep_recent_tokens.source] == ["default"] * 3
    assert r.context_window.source == "built-in model catalogue"
    assert r.agent_dir == pi.agent
    assert r.files_read == []
    assert r.project_trusted is None
    assert r.warnings == []


def test_agent_settings(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"enabled": False, "reserveTokens": 1000, "keepRecentTokens": 3000}})
    r = pi.resolve()
    source = f"agent settings: {pi.agent_settings}"
    assert values(r)[:3] == (False, 1000, 3000)
    assert r.enabled.source == r.reserve_tokens.source == r.keep_recent_tokens.source == source
    assert r.files_read == [pi.agent_settings]


def test_project_overrides_agent_by_deep_merge(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 3000}})
    pi.write(pi.project_settings, {"compaction": {"keepRecentTokens": 5}})
    r = pi.resolve(project_trust=True)
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value) == (1000, 5)
    assert r.reserve_tokens.source == f"agent settings: {pi.agent_settings}"
    assert r.keep_recent_tokens.source == f"project settings: {pi.project_settings}"
    assert r.project_trusted is not None and r.project_trusted.source == "flag --approve"
    assert r.files_read == [pi.agent_settings, pi.project_settings]


def test_project_non_object_replaces_whole_block(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"reserveTokens": 1000}})
    pi.write(pi.project_settings, {"compaction": 5})
    r = pi.resolve(project_trust=True)
    assert (r.reserve_tokens.value, r.reserve_tokens.source) == (16384, "default")
    assert any("compaction is '5', not an object" in w for w in r.warnings)


def test_untrusted_project_is_not_read(pi: Env) -> None:
    pi.write(pi.project_settings, "{ not json")
    r = pi.resolve()
    assert r.keep_recent_tokens.source == "default"
    assert r.project_trusted is not None
    assert (r.project_trusted.value, r.project_trusted.source) == (
        False,
        "Pi default (ask; untrusted without an answer)",
    )
    assert pi.project_settings not in r.files_read  # Pi never opens it, so its syntax error is silent
    assert len(r.warnings) == 1 and "no trust decision is recorded" in r.warnings[0]
    r = pi.resolve(project_trust=False)
    assert r.project_trusted is not None and r.project_trusted.source == "flag --no-approve"
    assert r.warnings == []


def test_project_trust_from_trust_json_and_default(pi: Env) -> None:
    pi.write(pi.project_settings, {"compaction": {"keepRecentTokens": 5}})
    trust = pi.write(pi.agent / "trust.json", {str(pi.project.parent): True, str(pi.project): None})
    r = pi.resolve()
    assert r.keep_recent_tokens.value == 5
    assert r.project_trusted is not None
    assert r.project_trusted.source == f"trust.json: {trust} ({pi.project.parent})"
    # The nearest decision wins.
    pi.write(trust, {str(pi.project.parent): True, str(pi.project): False})
    r = pi.resolve()
    assert r.keep_recent_tokens.value == 20000
    assert any("says no" in w for w in r.warnings)
    # Without a decision, the agent directory's defaultProjectTrust decides (project files cannot).
    trust.unlink()
    pi.write(pi.agent_settings, {"defaultProjectTrust": "always"})
    r = pi.resolve()
    assert r.keep_recent_tokens.value == 5
    assert r.project_trusted is not None
    assert r.project_trusted.source == f"defaultProjectTrust in agent settings: {pi.agent_settings}"


def test_malformed_trust_store_is_an_error(pi: Env) -> None:
    pi.write(pi.project_settings, {})
    trust = pi.write(pi.agent / "trust.json", {"/x": 1})
    with pytest.raises(ConfigError, match="must be true, false, or null") as info:
        pi.resolve()
    assert info.value.path == str(trust)


def test_model_overrides(pi: Env) -> None:
    settings = {
        "compaction": {
            "reserveTokens": 1000,
            "keepRecentTokens": 3000,
            "modelOverrides": {KEY: {"reserveTokens": 7}, "openai/other": {"keepRecentTokens": 1}},
        }
    }
    pi.write(pi.agent_settings, settings)
    r = pi.resolve()
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value) == (7, 3000)
    assert r.reserve_tokens.source == f"modelOverrides[{KEY}] in {pi.agent_settings}"
    assert r.keep_recent_tokens.source == f"agent settings: {pi.agent_settings}"
    # Keys are exact "provider/modelId" strings; another model gets the plain settings.
    r = pi.resolve(model=("openai", "other"))
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value) == (1000, 1)
    r = pi.resolve(model=("openai", "gpt-x"))
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value) == (1000, 3000)


def test_model_overrides_merge_across_layers(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"modelOverrides": {KEY: {"reserveTokens": 7}}}})
    pi.write(pi.project_settings, {"compaction": {"modelOverrides": {KEY: {"keepRecentTokens": 9}}}})
    r = pi.resolve(project_trust=True)
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value) == (7, 9)
    assert r.reserve_tokens.source == f"modelOverrides[{KEY}] in {pi.agent_settings}"
    assert r.keep_recent_tokens.source == f"modelOverrides[{KEY}] in {pi.project_settings}"


def test_flags_override_files(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 3000}})
    flags = {"keep_recent_tokens": 42, "reserve_tokens": None, "context_window": 50_000}
    r = pi.resolve(flags=flags)
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value, r.context_window.value) == (1000, 42, 50_000)
    assert r.keep_recent_tokens.source == "flag --keep-recent-tokens"
    assert r.context_window.source == "flag --context-window"


def test_flag_replaces_an_invalid_setting_with_a_warning(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"reserveTokens": -1}})
    r = pi.resolve(flags={"reserve_tokens": 0})
    assert (r.reserve_tokens.value, r.reserve_tokens.source) == (0, "flag --reserve-tokens")
    assert r.warnings == [
        f"{pi.agent_settings}: Invalid compaction.reserveTokens setting: -1. Expected a non-negative safe "
        "integer. (Pi 1.6.0 stops here; --reserve-tokens overrides it)"
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"reserve_tokens": -1}, "--reserve-tokens must be a non-negative integer, got -1"),
        ({"keep_recent_tokens": True}, "--keep-recent-tokens must be a non-negative integer, got True"),
        ({"context_window": 0}, "--context-window must be a positive integer, got 0"),
    ],
)
def test_invalid_flags(pi: Env, flags: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        pi.resolve(flags=flags)


def test_no_config_ignores_every_file(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"reserveTokens": -1}})
    pi.write(pi.project_settings, {"compaction": {"keepRecentTokens": 5}})
    pi.write(
        pi.agent / "models.json",
        {"providers": {"anthropic": {"modelOverrides": {MODEL[1]: {"contextWindow": 5}}}}},
    )
    r = pi.resolve(use_config=False, flags={"reserve_tokens": 100})
    assert values(r) == (True, 100, 20000, CATALOGUE_WINDOW)
    assert r.keep_recent_tokens.source == "default"
    assert r.context_window.source == "built-in model catalogue"
    assert (r.files_read, r.warnings, r.project_trusted) == ([], [], None)


@pytest.mark.parametrize(
    ("compaction", "message"),
    [
        ({"reserveTokens": -1}, "Invalid compaction.reserveTokens setting: -1."),
        ({"keepRecentTokens": 1.5}, "Invalid compaction.keepRecentTokens setting: 1.5."),
        ({"reserveTokens": "100"}, "Invalid compaction.reserveTokens setting: 100."),
        ({"reserveTokens": None}, "Invalid compaction.reserveTokens setting: null."),
        ({"reserveTokens": [1, 2]}, "Invalid compaction.reserveTokens setting: 1,2."),
        ({"reserveTokens": {}}, "Invalid compaction.reserveTokens setting: [object Object]."),
        ({"reserveTokens": 2**53}, "Invalid compaction.reserveTokens setting: 9007199254740992."),
        # Pi reads reserveTokens first, so its error is the one reported.
        ({"reserveTokens": -1, "keepRecentTokens": -2}, "Invalid compaction.reserveTokens setting: -1."),
        # The plain setting is checked even when a model override would win.
        (
            {"reserveTokens": -1, "modelOverrides": {KEY: {"reserveTokens": 7}}},
            "Invalid compaction.reserveTokens setting: -1.",
        ),
        (
            {"modelOverrides": {KEY: {"keepRecentTokens": -5}}},
            f'Invalid compaction.modelOverrides["{KEY}"].keepRecentTokens setting: -5.',
        ),
    ],
)
def test_invalid_values_are_errors(pi: Env, compaction: dict[str, Any], message: str) -> None:
    pi.write(pi.agent_settings, {"compaction": compaction})
    with pytest.raises(ConfigError) as info:
        pi.resolve()
    assert info.value.message == f"{message} Expected a non-negative safe integer."
    assert info.value.path == str(pi.agent_settings)


@pytest.mark.parametrize(("entry", "shown"), [(5, "5"), (None, "null"), ([], "")])
def test_model_override_entry_must_be_an_object(pi: Env, entry: Any, shown: str) -> None:
    pi.write(pi.agent_settings, {"compaction": {"modelOverrides": {KEY: entry}}})
    with pytest.raises(ConfigError) as info:
        pi.resolve()
    expected = f'Invalid compaction.modelOverrides["{KEY}"] setting: {shown}. Expected an object.'
    assert (info.value.message, info.value.path) == (expected, str(pi.agent_settings))


def test_valid_edge_values(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"reserveTokens": 1e3, "keepRecentTokens": 2**53 - 1}})
    r = pi.resolve()
    assert (r.reserve_tokens.value, r.keep_recent_tokens.value) == (1000, 2**53 - 1)
    assert type(r.reserve_tokens.value) is int


@pytest.mark.parametrize(("raw", "expected"), [("false", True), (0, False), ("", False), (None, True)])
def test_enabled_uses_truthiness(pi: Env, raw: Any, expected: bool) -> None:
    pi.write(pi.agent_settings, {"compaction": {"enabled": raw}})
    r = pi.resolve()
    assert r.enabled.value is expected
    if raw is None:  # `null ?? true`
        assert (r.enabled.source, r.warnings) == ("default", [])
    else:
        assert r.enabled.source == f"agent settings: {pi.agent_settings}"
        assert "not true/false" in r.warnings[0]


def test_malformed_json_is_a_warning_and_an_empty_file(pi: Env) -> None:
    pi.write(pi.agent_settings, '{"compaction": {"reserveTokens": 1000}')
    pi.write(pi.project_settings, {"compaction": {"keepRecentTokens": 5}})
    r = pi.resolve(project_trust=True)
    assert (r.reserve_tokens.value, r.reserve_tokens.source) == (16384, "default")
    assert (r.keep_recent_tokens.value, r.keep_recent_tokens.source) == (
        5,
        f"project settings: {pi.project_settings}",
    )
    assert r.warnings == [
        f"Invalid settings file {pi.agent_settings}: invalid JSON: Expecting ',' delimiter (line 1, column 39)"
    ]


@pytest.mark.parametrize(
    ("content", "warning"),
    [
        ("", None),  # empty: no settings, no complaint
        ("[1, 2]", None),  # an array merges as no settings
        ("\ufeff", "invalid JSON"),  # Pi tests emptiness before dropping the BOM
        ("null", "Cannot use 'in' operator to search for 'queueMode' in null"),
        ('{"compaction": {"reserveTokens": NaN}}', "invalid JSON: unexpected NaN (line 1, column 34)"),
        ('{"compaction": {},}', "invalid JSON"),  # no comments or trailing commas in settings.json
    ],
)
def test_settings_file_shapes(pi: Env, content: str, warning: str | None) -> None:
    pi.write(pi.agent_settings, content)
    r = pi.resolve()
    assert values(r)[:3] == (True, 16384, 20000)
    if warning is None:
        assert r.warnings == []
    else:
        assert len(r.warnings) == 1
        assert r.warnings[0].startswith(f"Invalid settings file {pi.agent_settings}: ")
        assert warning in r.warnings[0]


def test_bom_is_dropped(pi: Env) -> None:
    pi.write(pi.agent_settings, '\ufeff{"compaction": {"reserveTokens": 12}}')
    assert pi.resolve().reserve_tokens.value == 12


def test_load_json_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{\n  "a": 1,\n  "b": }\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_json_file(path)
    assert (info.value.path, info.value.line) == (str(path), 3)
    assert str(info.value) == f"{path}:3: invalid JSON: Expecting value (line 3, column 8)"
    path.write_text('\ufeff{"a": [1, 2,], // note\n "b": "http://x//y"}', encoding="utf-8")
    assert load_json_file(path, comments=True) == {"a": [1, 2], "b": "http://x//y"}
    path.write_text("[Infinity]", encoding="utf-8")
    with pytest.raises(ConfigError, match="unexpected Infinity"):
        load_json_file(path)
    with pytest.raises(ConfigError, match="no such file"):
        load_json_file(tmp_path / "missing.json")


def test_strip_json_comments_keeps_strings() -> None:
    assert strip_json_comments('{"u": "a//b", "s": "q\\"//x", // c\n "t": [1,\n]}') == (
        '{"u": "a//b", "s": "q\\"//x", \n "t": [1\n]}'
    )


# --- context window -------------------------------------------------------------------------------


def test_catalogue_context_window(pi: Env) -> None:
    assert builtin_model_limits(*MODEL) == (CATALOGUE_WINDOW, 128_000)
    assert builtin_model_limits("anthropic", "no-such-model") is None
    r = pi.resolve()
    assert (r.context_window.value, r.context_window.source) == (CATALOGUE_WINDOW, "built-in model catalogue")


def test_models_json_override(pi: Env) -> None:
    models = pi.write(
        pi.agent / "models.json",
        "// comments and trailing commas are allowed here\n"
        '{"providers": {"anthropic": {"modelOverrides": {"claude-fable-5": {"contextWindow": 64000},},},},}',
    )
    r = pi.resolve()
    assert (r.context_window.value, r.context_window.source) == (64000, f"models.json: {models}")
    assert r.files_read == [models]


def test_models_json_custom_models(pi: Env) -> None:
    models = pi.agent / "models.json"
    local = {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions"}
    pi.write(
        models,
        {
            "providers": {
                "ollama": {**local, "models": [{"id": "big", "contextWindow": 32768}, {"id": "plain"}]},
                # A custom entry for a built-in id replaces the model whole: no inherited window.
                "anthropic": {"models": [{"id": "claude-fable-5"}]},
            }
        },
    )
    r = pi.resolve(model=("ollama", "big"))
    assert (r.context_window.value, r.context_window.source) == (32768, f"models.json: {models}")
    r = pi.resolve(model=("ollama", "plain"))
    assert (r.context_window.value, r.context_window.source) == (
        DEFAULT_CONTEXT_WINDOW,
        f"Pi default for models.json models ({models})",
    )
    assert pi.resolve().context_window.value == DEFAULT_CONTEXT_WINDOW


def test_models_json_errors_drop_the_file(pi: Env) -> None:
    models = pi.agent / "models.json"
    override = {"modelOverrides": {"claude-fable-5": {"contextWindow": 64000}}}
    # Anything outside the schema, even for another provider, makes Pi ignore the whole file.
    pi.write(models, {"providers": {"anthropic": override, "other": {"headers": {"x": 1}}}})
    r = pi.resolve()
    assert (r.context_window.value, r.context_window.source) == (CATALOGUE_WINDOW, "built-in model catalogue")
    assert r.warnings == [
        f"{models}: invalid models.json schema: providers.other.headers.x: 1 is not of type 'string'; "
        "Pi ignores models.json"
    ]
    # A provider entry Pi cannot compose is dropped on its own.
    pi.write(
        models,
        {
            "providers": {
                "anthropic": {"name": "A"},
                "ollama": {"baseUrl": "http://x", "models": [{"id": "m"}]},
            }
        },
    )
    r = pi.resolve()
    assert r.context_window.source == "built-in model catalogue"
    assert 'provider "anthropic": must specify' in r.warnings[0]
    r = pi.resolve(model=("ollama", "m"))
    assert r.context_window.source == SOURCE_PI_DEFAULT
    assert 'provider "ollama": model m: no "api" specified' in r.warnings[0]


def test_cached_catalogue_overlay(pi: Env) -> None:
    store = pi.agent / "models-store.json"
    entry = {"models": [{"id": "claude-fable-5", "provider": "anthropic", "contextWindow": 4242}]}
    # Older than the shipped catalogue (2026-11-20): ignored.
    pi.write(store, {"anthropic": {**entry, "lastModified": 1_700_000_000_000}})
    assert pi.resolve().context_window.value == CATALOGUE_WINDOW
    pi.write(store, {"anthropic": {**entry, "lastModified": 1_800_000_000_000}})
    r = pi.resolve()
    assert (r.context_window.value, r.context_window.source) == (4242, f"cached model catalogue: {store}")
    # models.json modelOverrides still come last.
    pi.write(
        pi.agent / "models.json",
        {"providers": {"anthropic": {"modelOverrides": {"claude-fable-5": {"contextWindow": 9}}}}},
    )
    assert pi.resolve().context_window.value == 9


def test_unknown_model_default(pi: Env) -> None:
    r = pi.resolve(model=("anthropic", "no-such-model"))
    assert (r.context_window.value, r.context_window.source) == (DEFAULT_CONTEXT_WINDOW, SOURCE_PI_DEFAULT)
    assert "unknown to Pi 1.6.0" in r.warnings[0]
    r = pi.resolve(model=None)
    assert (r.context_window.value, r.context_window.source) == (DEFAULT_CONTEXT_WINDOW, SOURCE_PI_DEFAULT)
    assert "names no model" in r.warnings[0]


# --- results --------------------------------------------------------------------------------------


def test_compaction_settings_and_json(pi: Env) -> None:
    pi.write(pi.agent_settings, {"compaction": {"keepRecentTokens": 3000}})
    r = pi.resolve(flags={"reserve_tokens": 100})
    assert r.compaction_settings() == CompactionSettings(reserve_tokens=100, keep_recent_tokens=3000, enabled=True)
    assert r.to_json() == {
        "enabled": {"value": True, "source": "default"},
        "reserveTokens": {"value": 100, "source": "flag --reserve-tokens"},
        "keepRecentTokens": {"value": 3000, "source": f"agent settings: {pi.agent_settings}"},
        "contextWindow": {"value": CATALOGUE_WINDOW, "source": "built-in model catalogue"},
        "projectTrusted": None,
        "agentDir": str(pi.agent),
        "filesRead": [str(pi.agent_settings)],
        "warnings": [],
    }


def test_unknown_flag_is_a_programming_error(pi: Env) -> None:
    with pytest.raises(ValueError, match="unknown flags"):
        pi.resolve(flags={"keep_recent": 1})
