"""Fuzz and property tests: bad input never crashes, hangs or leaves a traceback.

``PITOOLS_FUZZ_EXAMPLES`` sets the number of examples (default small, so ``make test`` stays
fast); ``make fuzz`` runs 100,000. See ``tests/fuzz/support.py``.
"""
