"""How deep a parsed value nests, checked without recursion.

Converting, stringifying or walking a value recursively fails past Python's recursion limit,
while JavaScript goes deeper; callers check first and show or treat such values specially. A
module of its own, at the bottom of the core, so that the validator and the views share it
without one importing the other.
"""

from __future__ import annotations

from typing import Any

#: Deeper values are shown as a marker: converting them would exhaust Python's recursion limit.
MAX_NESTING = 100


def nesting_ok(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` nests at most ``limit`` arrays/objects deep (checked without recursion)."""
    if type(value) is not dict and type(value) is not list:
        return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return False
        for child in current.values() if type(current) is dict else current:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return True
