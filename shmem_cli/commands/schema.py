"""``shmem schema``: print the JSON Schema of the access-spec format."""

from __future__ import annotations

import click

from .common import CONTEXT, ShmemCommand
from .environment import current_environment


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="Print the JSON Schema of the access-spec format.",
)
def schema() -> None:
    """Print the JSON Schema (draft-07) of the access-spec format.

    The schema lists every key of a spec (name, block, params, arch, expect,
    kernel: the compiled kernel shmem lint checks the spec against, arrays with
    dtype/shape/pad/offset/swizzle, accesses with
    array/op/index/loop/when/atomic/matrices/trans/line/expect), its type and
    what it means. Editors that understand JSON Schema use it to complete and check
    specs as you type. shmem itself checks every spec against it and reports a
    violation at its file:line:column.

    Exit status: 0.

    \b
    Examples:
      shmem schema > shmem-spec.schema.json
      # then, first line of a spec, for the YAML language server:
      # yaml-language-server: $schema=shmem-spec.schema.json
    """
    import json

    from ..spec.schema import spec_schema

    current_environment().out(json.dumps(spec_schema(), indent=2))
