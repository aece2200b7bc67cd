"""jsonschema's validator for the spec schema (draft 7, strict integers)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .document import spec_schema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


@cache
def validator() -> Validator:
    from jsonschema import Draft7Validator, validators

    def is_strict_integer(checker: Any, instance: Any) -> bool:
        # Draft 7 counts 3.0 as an integer; a spec wants a real int.
        return isinstance(instance, int) and not isinstance(instance, bool)

    checker = Draft7Validator.TYPE_CHECKER.redefine("integer", is_strict_integer)
    cls = validators.extend(Draft7Validator, type_checker=checker)  # type: ignore[no-untyped-call]
    validator: Validator = cls(spec_schema())
    return validator
