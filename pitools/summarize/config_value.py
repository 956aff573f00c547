"""Pi's configuration value syntax, used for API keys and header values.

Mirrors ``resolve-config-value.ts`` in pi-coding-agent:

* a value starting with ``!`` is a shell command; its trimmed stdout is the value
  (``/bin/sh``, 10 s timeout, stderr ignored; a failure, a non-zero exit or empty output
  leaves the value unresolved);
* otherwise ``$NAME`` and ``${NAME}`` are replaced by environment variables (an empty or
  unset variable leaves the whole value unresolved), ``$$`` is a literal ``$`` and ``$!``
  a literal ``!``; any other ``$`` is kept as it is, and ``${...}`` around something that is
  not a variable name stays literal;
* everything else is literal.

Variables are looked up first in ``extra_env`` (a credential's own ``env`` object in
``auth.json``), then in ``env``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from pitools.errors import ConfigError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMAND_TIMEOUT = 10.0


@dataclass(frozen=True)
class _Literal:
    text: str


@dataclass(frozen=True)
class _EnvRef:
    name: str


_Part = _Literal | _EnvRef


def _parse_template(value: str) -> list[_Part]:
    parts: list[_Part] = []

    def literal(text: str) -> None:
        if not text:
            return
        if parts and isinstance(parts[-1], _Literal):
            parts[-1] = _Literal(parts[-1].text + text)
        else:
            parts.append(_Literal(text))

    i = 0
    while i < len(value):
        dollar = value.find("$", i)
        if dollar < 0:
            literal(value[i:])
            break
        literal(value[i:dollar])
        nxt = value[dollar + 1 : dollar + 2]
        if nxt in ("$", "!"):
            literal(nxt)
            i = dollar + 2
        elif nxt == "{":
            end = value.find("}", dollar + 2)
            if end < 0:
                literal("$")
                i = dollar + 1
                continue
            name = value[dollar + 2 : end]
            if _NAME.fullmatch(name):
                parts.append(_EnvRef(name))
            else:
                literal(value[dollar : end + 1])
            i = end + 1
        else:
            match = _NAME.match(value, dollar + 1)
            if match:
                parts.append(_EnvRef(match.group(0)))
                i = match.end()
            else:
                literal("$")
                i = dollar + 1
    return parts


def is_command(value: str) -> bool:
    """True for a ``!command`` value."""
    return value.startswith("!")


def env_var_names(value: str) -> list[str]:
    """The variables a non-command value refers to, in order, without repeats."""
    if is_command(value):
        return []
    names: list[str] = []
    for part in _parse_template(value):
        if isinstance(part, _EnvRef) and part.name not in names:
            names.append(part.name)
    return names


def _lookup(name: str, env: Mapping[str, str], extra_env: Mapping[str, str] | None) -> str | None:
    # Like JavaScript's `a || b`, an empty string counts as unset.
    return (extra_env or {}).get(name) or env.get(name) or None


def _run_command(command: str, env: Mapping[str, str]) -> str | None:
    try:
        proc = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=_COMMAND_TIMEOUT,
            env=dict(env),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    out = proc.stdout.decode("utf-8", errors="replace").strip()
    return out or None


#: What a ``!command`` value stands for while commands may not run yet (before the user confirmed).
DEFERRED_COMMAND = "<!command, not run yet>"


def resolve_config_value(
    value: str,
    env: Mapping[str, str],
    extra_env: Mapping[str, str] | None = None,
    *,
    run_commands: bool = True,
) -> str | None:
    """The resolved value, or None when a variable is missing or the command fails.

    With ``run_commands=False`` a ``!command`` is not run: :data:`DEFERRED_COMMAND` stands in.
    """
    if is_command(value) and not run_commands:
        return DEFERRED_COMMAND
    if is_command(value):
        # Pi runs the command in its own process environment; a credential's `env` is only
        # for `$NAME` references.
        return _run_command(value[1:], env)
    out: list[str] = []
    for part in _parse_template(value):
        if isinstance(part, _Literal):
            out.append(part.text)
            continue
        found = _lookup(part.name, env, extra_env)
        if found is None:
            return None
        out.append(found)
    return "".join(out)


def resolve_config_value_or_raise(
    value: str,
    description: str,
    env: Mapping[str, str],
    extra_env: Mapping[str, str] | None = None,
    *,
    path: str | None = None,
    run_commands: bool = True,
) -> str:
    """Resolve ``value`` or raise ``ConfigError`` naming the missing variable(s) or the command.

    Mirrors ``resolveConfigValueOrThrow``. The message never contains the value itself
    when it is literal, only variable names or the command text.
    """
    resolved = resolve_config_value(value, env, extra_env, run_commands=run_commands)
    if resolved is not None:
        return resolved
    if is_command(value):
        raise ConfigError(f"could not resolve {description} from shell command: {value[1:]}", path=path)
    missing = [n for n in env_var_names(value) if _lookup(n, env, extra_env) is None]
    if len(missing) == 1:
        raise ConfigError(f"could not resolve {description}: environment variable {missing[0]} is not set", path=path)
    if missing:
        raise ConfigError(
            f"could not resolve {description}: environment variables {', '.join(missing)} are not set",
            path=path,
        )
    raise ConfigError(f"could not resolve {description}", path=path)


def resolve_headers_or_raise(
    headers: Mapping[str, str],
    description: str,
    env: Mapping[str, str],
    extra_env: Mapping[str, str] | None = None,
    *,
    path: str | None = None,
    run_commands: bool = True,
) -> dict[str, str]:
    """Resolve every header value (``resolveHeadersOrThrow``)."""
    return {
        name: resolve_config_value_or_raise(
            raw, f'{description} header "{name}"', env, extra_env, path=path, run_commands=run_commands
        )
        for name, raw in headers.items()
    }
