"""Effectful use cases: read through core, ask models through summarize, write through store."""
