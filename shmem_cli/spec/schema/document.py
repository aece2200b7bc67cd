"""The JSON Schema (draft-07) of the access-spec format, read once from spec_schema.json.

The values of ``op``, ``atomic`` and ``arch`` are not written in the file: they are
the op vocabulary's (:mod:`shmem_cli.hardware.ops`) and the architecture profiles'
names (:data:`shmem_cli.hardware.arch.PROFILES`), filled in here, so that an op, an
atomic kind or a profile added there is one a spec may name.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from ...hardware.arch import PROFILES, most_smem_per_block
from ...hardware.ops import ATOMIC_NAMES, SPEC_OPS

#: spec_schema.json, at the top of the package (shmem_cli/spec/schema/ is two levels down)
SCHEMA_FILE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "spec_schema.json"
)


SchemaKey = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def schema_key() -> SchemaKey:
    """What the schema depends on: the architectures, spec ops and atomic kinds registered
    now (a schema is built once per key)."""
    return tuple(PROFILES), tuple(SPEC_OPS), tuple(ATOMIC_NAMES)


def spec_schema() -> dict[str, Any]:
    """The JSON schema (draft-07) of spec format v1, with the ops, atomic kinds and
    architectures registered now."""
    return schema_for(*schema_key())


@cache
def schema_for(
    archs: tuple[str, ...], spec_ops: tuple[str, ...], atomics: tuple[str, ...]
) -> dict[str, Any]:
    # the file beside the package's modules; importlib.resources, needed only for a zipped package,
    # would add some 2 ms to every start-up
    if os.path.isfile(SCHEMA_FILE):
        with open(SCHEMA_FILE, encoding="utf-8") as f:
            text = f.read()
    else:  # pragma: no cover - a zipped package
        from importlib import resources

        text = resources.files("shmem_cli").joinpath("spec_schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    loaded["properties"]["arch"]["enum"] = list(archs)
    access = loaded["definitions"]["access"]["properties"]
    access["op"]["enum"] = list(spec_ops)
    access["atomic"]["enum"] = list(atomics)
    kernel = loaded["definitions"]["kernel"]["properties"]
    kernel["dynamic_smem"]["maximum"] = most_smem_per_block()  # the profiles' own bound
    return loaded
