"""The command tests' ``run`` fixture: the API's documents are compared with what the CLI prints."""

from tests.cli.conftest import run  # noqa: F401
