"""Sessions as tables (``pitools dataset``): the documented columns and the pure row builders."""
