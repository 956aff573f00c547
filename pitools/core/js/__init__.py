"""JavaScript semantics Pi's results depend on: UTF-16 lengths, JSON.stringify, Date, truthiness."""
