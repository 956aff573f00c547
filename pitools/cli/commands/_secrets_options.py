"""Options ``scan``, ``redact`` and ``export --redact`` share: which exact values to look for."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from pitools.cli.options import options_of

if TYPE_CHECKING:
    from pitools.cli.output import Output

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class ValueArgs:
    """The parsed :func:`value_options` of one run (the command receives them as ``values``)."""

    given: tuple[str, ...]
    values_file: str | None
    env_names: bool
    no_pi_keys: bool
    no_entropy: bool

    def any_given(self) -> bool:
        """Whether any of the options was given on the command line."""
        return bool(self.given or self.values_file or self.env_names or self.no_pi_keys or self.no_entropy)

    def detector(self, out: Output) -> Any:
        """The detector for this run; notes about skipped values go to ``out``'s stderr (never the values)."""
        from pitools.core.secrets.detect import MIN_VALUE_LEN, Detector
        from pitools.ops.secret_values import collect

        found = collect(
            given=self.given, values_file=self.values_file, env_names=self.env_names, pi_keys=not self.no_pi_keys
        )
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
        return Detector(found.values, entropy=not self.no_entropy)


def value_options(f: F) -> F:
    """``--value``, ``--values-file``, ``--env``, ``--no-pi-keys`` and ``--no-entropy``: one list, so
    scan, redact and export --redact take the same words, handed over as one :class:`ValueArgs`
    named ``values``."""
    return options_of(
        ValueArgs,
        "values",
        click.option(
            "--value",
            "given",
            metavar="TEXT",
            multiple=True,
            help="An exact value to look for (repeatable; at least 6 characters).",
        ),
        click.option(
            "--values-file",
            metavar="FILE",
            default=None,
            help="Exact values to look for, one per line (kept out of shell history, unlike --value).",
        ),
        click.option(
            "--env",
            "env_names",
            is_flag=True,
            help="Also look for the values of environment variables named like *_KEY, *_TOKEN, *_SECRET, *PASSWORD*.",
        ),
        click.option(
            "--no-pi-keys",
            is_flag=True,
            help="Do not look for the API keys Pi itself would use (auth.json, models.json, Pi's environment "
            "variables). !command keys in Pi's config are never run either way.",
        ),
        click.option(
            "--no-entropy",
            is_flag=True,
            help="Skip the high-entropy check (random-looking 32-200 character tokens).",
        ),
    )(f)
