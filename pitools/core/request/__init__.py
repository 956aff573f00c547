"""pi-ai 1.6.0 provider request bodies, built offline (``pitools request``)."""
