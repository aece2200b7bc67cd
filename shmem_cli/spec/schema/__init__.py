"""Is a spec document valid against the spec schema, and if not, why: one entry, ``validate``.

Two algorithms give the same verdict, chosen numpy-style with ``kind=``:

``"fast"``
    a plain walk over the schema (:mod:`.fast`) that knows the few draft-07
    keywords spec_schema.json uses. It only says yes or no: an invalid document
    gives one error without a place. Cheap: no jsonschema import.
``"jsonschema"``
    the jsonschema library (:mod:`.check`), every problem explained in words at
    its line and column (:mod:`.explain`).
``"auto"`` (the default)
    the fast walk first; only a document it finds invalid (or one it cannot
    judge) goes to jsonschema, to be explained. The answer of ``"jsonschema"``,
    at the cost of ``"fast"`` for the common, valid spec.

spec_schema.json stays the one source of truth for both; tests/test_schema.py
checks that they agree on valid and invalid documents.
"""

from __future__ import annotations

from typing import Literal

from ...plumbing.errors import ShmemError
from ..source import Document
from .document import spec_schema

__all__ = ["Kind", "spec_schema", "validate"]

Kind = Literal["auto", "fast", "jsonschema"]


def validate(doc: Document, *, kind: Kind = "auto") -> list[ShmemError]:
    """Every schema problem of ``doc``, located and sorted by position (empty: valid)."""
    if kind not in ("auto", "fast", "jsonschema"):
        raise ValueError(f"kind must be 'auto', 'fast' or 'jsonschema', not {kind!r}")
    if kind != "jsonschema":
        from .fast import conforms

        verdict = conforms(doc.data, spec_schema())
        if verdict:
            return []
        if verdict is not None and kind == "fast":
            return [ShmemError("the spec does not match the spec schema", path=doc.path)]
    from .check import validator
    from .explain import Reporter

    reporter = Reporter(doc)
    reporter.report_all(validator().iter_errors(doc.data))
    return reporter.results()
