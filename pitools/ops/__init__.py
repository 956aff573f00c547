"""Effectful use cases: each reads through core and writes through store (or sends over the network)."""
