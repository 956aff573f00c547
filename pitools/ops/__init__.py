"""Effectful use cases: each reads through core and writes only through ``pitools.store``."""
