"""Sessions as Pi loads them: the reader, the entry schema, migration, the tree, leaves, discovery."""
