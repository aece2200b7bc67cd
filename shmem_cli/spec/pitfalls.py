"""Specs that are valid YAML but not what their author wrote: the usual slips, in words.

A C expression written in a YAML list without quotes is split at its commas
(``index: [min(lane, 7), lane]`` becomes three items); habits from Python
(``**``, ``//``, ``and``/``or``/``not``, ``range(...)``) and near-miss names
(``threadIdx.X``, ``threadidx.x``, ``blockIdx.x``, the docs' shorthand ``tx``)
would otherwise surface as a parser's "unexpected '*'" or "unknown name". Each
is reported here at the value, with the spelling to use instead. Only strings
in expression places are looked at; a valid spec never trips these checks.
:func:`shmem_cli.spec.compile.compile_spec` runs them with the schema validation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..plumbing.errors import ShmemError, shorten
from .records import THREAD_NAMES
from .source import Document, KeyPath

_HABITS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\*\*"), "'**' is Python, not C: for a power of two write 1 << k, else multiply"),
    (
        re.compile(r"//"),
        "'//' is Python, not C: '/' already divides integers (rounding toward zero, as CUDA does)",
    ),
    (re.compile(r"\band\b"), "'and' is Python: in C write &&"),
    (re.compile(r"\bor\b"), "'or' is Python: in C write ||"),
    (re.compile(r"\bnot\b"), "'not' is Python: in C write !"),
    (
        re.compile(r"\brange\s*\("),
        "range(...) is Python: a loop is written under loop:, e.g. loop: {i: 0..3} "
        "(a..b or a..b:step, both ends inclusive), and its variable used here",
    ),
)
_BUILTIN = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)")
_SHORT = re.compile(r"\b(tx|ty|tz)\b")


def _names_hint(text: str, declared: set[str]) -> str | None:
    """What is wrong with a thread-index name in ``text``, if anything."""
    for match in _BUILTIN.finditer(text):
        base, member = match.group(1), match.group(2)
        written = f"{base}.{member}"
        if base in ("threadIdx", "blockDim") and member in ("x", "y", "z"):
            continue
        if base.lower() in ("blockidx", "griddim"):
            return (
                f"'{written}' is not available: shmem analyzes one thread block (every block "
                "uses its own shared memory the same way), so there is no blockIdx or gridDim; "
                "when the index depends on the block, make the block index a param"
            )
        if base.lower() in ("threadidx", "blockdim"):
            right = "threadIdx" if base.lower() == "threadidx" else "blockDim"
            member_ok = member.lower() if member.lower() in ("x", "y", "z") else "x"
            return (
                f"'{written}' is not a name: write {right}.{member_ok} ({right} has the members "
                "x, y and z, lower case)"
            )
    for match in _SHORT.finditer(text):
        name = match.group(1)
        if name not in declared and name not in _thread_names():
            return (
                f"'{name}' is the docs' shorthand for threadIdx.{name[1]}: in a spec write "
                f"threadIdx.{name[1]} (shmem leaves tx, ty and tz free as names of params and "
                "loop variables)"
            )
    return None


def _thread_names() -> frozenset[str]:
    # (if the shorthands become names, this check steps aside)
    return frozenset(THREAD_NAMES)


def _unbalanced(text: str) -> bool:
    return text.count("(") != text.count(")") or text.count("[") != text.count("]")


def _expressions(doc: Document) -> Iterator[tuple[KeyPath, str, set[str], bool]]:
    """(where, text, names declared there, is a list item of an index) of each expression."""
    data = doc.data if isinstance(doc.data, dict) else {}
    params = data.get("params")
    declared = set(params) if isinstance(params, dict) else set()
    block = data.get("block")
    if isinstance(block, list):
        for i, v in enumerate(block):
            if isinstance(v, str):
                yield ("block", i), v, declared, False
    arrays = data.get("arrays")
    if isinstance(arrays, dict):
        for name, arr in arrays.items():
            if not isinstance(arr, dict):
                continue
            shape = arr.get("shape")
            for i, v in enumerate(shape if isinstance(shape, list) else ()):
                if isinstance(v, str):
                    yield ("arrays", name, "shape", i), v, declared, False
            for key in ("pad", "offset"):
                if isinstance(arr.get(key), str):
                    yield ("arrays", name, key), arr[key], declared, False
    accesses = data.get("accesses")
    for i, acc in enumerate(accesses if isinstance(accesses, list) else ()):
        if not isinstance(acc, dict):
            continue
        loop = acc.get("loop")
        names = declared | (set(loop) if isinstance(loop, dict) else set())
        index = acc.get("index")
        for j, v in enumerate(index if isinstance(index, list) else ()):
            if isinstance(v, str):
                yield ("accesses", i, "index", j), v, names, True
        if isinstance(acc.get("when"), str):
            yield ("accesses", i, "when"), acc["when"], names, False


def pitfalls(doc: Document) -> list[ShmemError]:
    """The slips above found in ``doc``, one error per expression, located."""
    found: list[ShmemError] = []
    split_lists: set[KeyPath] = set()
    for keys, text, declared, in_index in _expressions(doc):
        message: str | None = None
        if in_index and _unbalanced(text) and keys[:-1] not in split_lists:
            split_lists.add(keys[:-1])
            message = (
                f"{shorten(text)!r} is only part of an expression: YAML splits a [...] list at "
                "every comma, so an expression with a comma must be quoted, e.g. "
                'index: ["min(lane, 7)", lane]'
            )
        if message is None:
            message = next((hint for rx, hint in _HABITS if rx.search(text)), None)
        if message is None:
            message = _names_hint(text, declared)
        if message is not None:
            if not message.startswith(repr(shorten(text))):
                message = f"in {shorten(text)!r}: {message}"
            found.append(ShmemError(message, path=doc.path, pos=doc.pos(*keys)))
    return found
