"""pitools: inspect, validate, replay and compact Pi coding-agent session files offline."""

from __future__ import annotations

__version__ = "0.1.0"

#: The Pi release whose behaviour pitools reproduces.
PI_REFERENCE_VERSION = "1.6.0"

__all__ = ["PI_REFERENCE_VERSION", "__version__"]
