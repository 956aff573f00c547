"""The pure core: no click, no rich, no printing, no network."""
