"""jsonschema's validator for the spec schema (draft 7, strict integers)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .document import SchemaKey, schema_for, schema_key
from .fast import regex

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


def validator() -> Validator:
    """The validator of the schema as the registries make it now (built once per schema)."""
    return _validator(schema_key())


@cache
def _validator(key: SchemaKey) -> Validator:
    from jsonschema import Draft7Validator, ValidationError, validators

    def is_strict_integer(checker: Any, instance: Any) -> bool:
        # Draft 7 counts 3.0 as an integer; a spec wants a real int.
        return isinstance(instance, int) and not isinstance(instance, bool)

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        # ECMA-262's '$' (the end of the text), not Python's (also before a final newline)
        if isinstance(instance, str) and regex(patrn).search(instance) is None:
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    checker = Draft7Validator.TYPE_CHECKER.redefine("integer", is_strict_integer)
    cls = validators.extend(  # type: ignore[no-untyped-call]
        Draft7Validator, type_checker=checker, validators={"pattern": pattern}
    )
    validator: Validator = cls(schema_for(*key))
    return validator
