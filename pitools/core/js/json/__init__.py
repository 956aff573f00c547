"""JSON exactly as JavaScript reads and writes it: the one place pitools parses and prints JSON.

* :mod:`~pitools.core.js.json.encode`: the encoder, ``JSON.stringify``'s bytes (orjson where it
  agrees with V8, the exact writer where it does not): ``to_json_bytes``, ``encode``,
  ``js_stringify``, ``js_stringify_len``, ``Serialized``/``serialize_each``/``fragment``,
  ``jsonable``, ``indent_json``, ``short_json``;
* :mod:`~pitools.core.js.json.stream`: the streaming writer (``write_json_to``, ``json_chunks``,
  ``JsonStream`` members for outputs too big to hold);
* :mod:`~pitools.core.js.json.exact`: the exact fallback, in plain Python (``quote``,
  ``number_text``, ``write_exact``, ``exact_bytes``);
* :mod:`~pitools.core.js.json.parse`: the parser, ``JSON.parse`` of a session line
  (``parse_json_line``; ``parse_deep`` for any nesting depth);
* :mod:`~pitools.core.js.json.record`: a record (dataclass) as a camelCase JSON object
  (``record_json``), for the findings, diagnostics and repair items commands print;
* :mod:`~pitools.core.js.json.lean`: the same reading and writing for the lean warm search,
  without importing orjson (a shortcut through CPython's C JSON code, falling back to the above).

This package file imports nothing, so the lean path pays only for :mod:`~pitools.core.js.json.lean`.
"""
