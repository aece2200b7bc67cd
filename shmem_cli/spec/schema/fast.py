"""A quick yes/no check of a document against the spec schema.

Importing jsonschema and building its validator costs more than analyzing a small
spec. Most specs are valid, and for those a plain walk over the *same* schema
(spec_schema.json stays the single source of truth) is enough. This module knows
the handful of draft-07 keywords that schema uses; :func:`conforms` answers True
(valid), False (invalid: the caller runs jsonschema to explain why) or None (the
schema uses something this walk does not know: the caller must use jsonschema).
tests/test_schema.py checks that it agrees with jsonschema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

# keywords that only annotate: they never make an instance invalid
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "definitions"}
)

_TYPES: dict[str, Callable[[Any], bool]] = {
    # as shmem's validator: an integer is a real int (not a bool, not 3.0)
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


class _Unsupported(Exception):
    """The schema uses a keyword or form this walk does not implement."""


@lru_cache(maxsize=64)
def regex(pattern: str) -> re.Pattern[str]:
    """A schema pattern as a Python regex with ECMA-262's meaning of a final ``$``: the end
    of the text (Python's ``$`` also matches before a final newline)."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + "\\Z"
    return re.compile(pattern)


def conforms(instance: Any, schema: Mapping[str, Any]) -> bool | None:
    """Whether ``instance`` is valid against the draft-07 ``schema`` (None: cannot tell)."""
    try:
        return _valid(instance, schema, schema)
    except (_Unsupported, RecursionError):
        return None


def _resolve(ref: str, root: Mapping[str, Any]) -> Mapping[str, Any]:
    if not ref.startswith("#/"):
        raise _Unsupported(ref)
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            raise _Unsupported(ref)
        node = node[part]
    if not isinstance(node, Mapping):
        raise _Unsupported(ref)
    return node


def _valid(value: Any, schema: Any, root: Mapping[str, Any]) -> bool:
    if schema is True or schema is False:
        return bool(schema)
    if not isinstance(schema, Mapping):
        raise _Unsupported(schema)
    if "$ref" in schema:  # draft-07: a $ref replaces its sibling keywords
        return _valid(value, _resolve(schema["$ref"], root), root)
    return all(_keyword(key, arg, value, schema, root) for key, arg in schema.items())


def _same(member: Any, value: Any) -> bool:
    """JSON equality of a scalar enum member and a value (true is not 1, 1.0 is 1)."""
    if isinstance(member, (list, dict)):
        raise _Unsupported(member)
    if isinstance(member, str) or isinstance(value, str):
        return bool(member == value)
    if isinstance(member, bool) or isinstance(value, bool):
        return member is value
    return bool(member == value)


def _keyword(
    key: str, arg: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]
) -> bool:
    """Whether ``value`` passes one keyword of ``schema``."""
    if key in _ANNOTATIONS:
        return True
    is_number = _TYPES["number"](value)
    if key == "type":
        names = [arg] if isinstance(arg, str) else arg
        if not isinstance(names, list) or any(n not in _TYPES for n in names):
            raise _Unsupported(arg)
        return any(_TYPES[n](value) for n in names)
    if key == "enum":
        if not isinstance(arg, list):
            raise _Unsupported(arg)
        return any(_same(member, value) for member in arg)
    if key == "anyOf":
        return any(_valid(value, sub, root) for sub in arg)
    if key == "minimum":
        return not is_number or value >= arg
    if key == "maximum":
        return not is_number or value <= arg
    if key == "minLength":
        return not isinstance(value, str) or len(value) >= arg
    if key == "pattern":
        return not isinstance(value, str) or regex(arg).search(value) is not None
    if key == "minItems":
        return not isinstance(value, list) or len(value) >= arg
    if key == "maxItems":
        return not isinstance(value, list) or len(value) <= arg
    if key == "items":
        if not isinstance(arg, (Mapping, bool)):
            raise _Unsupported(arg)  # tuple validation
        return not isinstance(value, list) or all(_valid(v, arg, root) for v in value)
    if key == "required":
        return not isinstance(value, dict) or all(name in value for name in arg)
    if key == "minProperties":
        return not isinstance(value, dict) or len(value) >= arg
    if key == "properties":
        return not isinstance(value, dict) or all(
            _valid(value[name], sub, root) for name, sub in arg.items() if name in value
        )
    if key == "additionalProperties":
        if "patternProperties" in schema:
            raise _Unsupported(key)
        known = schema.get("properties", {})
        return not isinstance(value, dict) or all(
            _valid(v, arg, root) for k, v in value.items() if k not in known
        )
    if key == "propertyNames":
        return not isinstance(value, dict) or all(_valid(k, arg, root) for k in value)
    raise _Unsupported(key)
