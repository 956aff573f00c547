"""Pi's context at a leaf: path, context entries, projection, messages and token estimates."""
