"""A spec file cannot be read, parsed, validated or analyzed.

Reported at the line and column of the fault (a YAML syntax error, a key the
format does not know, a wrong type, an undefined name in an index expression,
an index out of the array's bounds, a `kernel.grid` or a `kernel.args`,
`kernel.const` or `kernel.memory` value that no kernel could take: not a
number, `1e400`, `zeros:-5`, ...), one finding per problem: every
schema error of the file is reported, as ``shmem analyze`` does. The file's
accesses are not checked; every other file still is. A run with an invalid spec
exits with status 2 (as every shmem command does), whatever ``--fail-on`` or
``--exit-zero`` say, and this rule cannot be ignored.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ._base import FileCheck, Hit

CODE = "SH100"
NAME = "invalid-spec"
SEVERITY = Severity.ERROR
SCOPE = "file"


def check(item: FileCheck) -> Iterator[Hit]:
    if item.error is not None:
        for err in item.error.all:
            yield Hit(err.message, (), line=err.line, column=err.column)
