"""A spec file cannot be read, parsed, validated or analyzed.

Reported at the line and column of the fault (a YAML syntax error, a key the
format does not know, a wrong type, an undefined name in an index expression,
an index out of the array's bounds, ...). The file's accesses are not checked;
every other file still is.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Hit, Severity
from ._base import FileCheck

CODE = "SH100"
NAME = "invalid-spec"
SEVERITY = Severity.ERROR
SCOPE = "file"


def check(item: FileCheck) -> Iterator[Hit]:
    err = item.error
    if err is not None:
        yield Hit(err.message, (), line=err.line, column=err.column)
