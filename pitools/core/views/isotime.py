"""``Date#toISOString`` of a time in milliseconds, as the usage view and search name it.

The implementation is :func:`pitools.core.js.isotime.to_iso_string` (no imports: light enough for
the lean search path).
"""

from __future__ import annotations

from pitools.core.js.isotime import to_iso_string as iso_utc

__all__ = ["iso_utc"]
