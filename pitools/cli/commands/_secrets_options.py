"""Options ``scan``, ``redact`` and ``export --redact`` share: which exact values to look for."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from pitools.cli.output import Output

F = TypeVar("F", bound=Callable[..., Any])


def value_options(f: F) -> F:
    f = click.option(
        "--no-entropy",
        is_flag=True,
        help="Skip the high-entropy check (random-looking 32-200 character tokens).",
    )(f)
    f = click.option(
        "--no-pi-keys",
        is_flag=True,
        help="Do not look for the API keys Pi itself would use (auth.json, models.json, Pi's environment "
        "variables). !command keys in Pi's config are never run either way.",
    )(f)
    f = click.option(
        "--env",
        "env_names",
        is_flag=True,
        help="Also look for the values of environment variables named like *_KEY, *_TOKEN, *_SECRET, *PASSWORD*.",
    )(f)
    f = click.option(
        "--values-file",
        metavar="FILE",
        default=None,
        help="Exact values to look for, one per line (kept out of shell history, unlike --value).",
    )(f)
    f = click.option(
        "--value",
        "given",
        metavar="TEXT",
        multiple=True,
        help="An exact value to look for (repeatable; at least 6 characters).",
    )(f)
    return f


def build_detector(
    out: Output,
    given: tuple[str, ...],
    values_file: str | None,
    env_names: bool,
    no_pi_keys: bool,
    no_entropy: bool,
) -> Any:
    """The detector for this run; notes about skipped values go to ``out``'s stderr (never the values)."""
    from pitools.core.secrets.detect import MIN_VALUE_LEN, Detector
    from pitools.ops.secret_values import collect

    found = collect(given=given, values_file=values_file, env_names=env_names, pi_keys=not no_pi_keys)
    if found.skipped_commands:
        n = found.skipped_commands
        out.message(
            f"{n} API key{'s' if n != 1 else ''} in Pi's config {'are' if n != 1 else 'is'} a !command, "
            "not run while scanning; pass the value with --value or --values-file to look for it"
        )
    if found.too_short:
        out.message(f"ignored {found.too_short} value(s) shorter than {MIN_VALUE_LEN} characters")
    for note in found.notes:
        out.message(note)
    return Detector(found.values, entropy=not no_entropy)
