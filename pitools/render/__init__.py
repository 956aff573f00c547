"""Renderers: turn core results into human (rich), markdown or JSON output. No computation here."""
