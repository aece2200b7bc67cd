"""``zeros:BYTES``, a pointer parameter's new zero-filled buffer: its form and its bound, said
the same wherever it is given (``--arg``, a spec's ``kernel.args``).

The buffer is given at a byte offset of the parameter (``NAME+0=zeros:BYTES``): a bare
``NAME=zeros:BYTES`` would be read as the parameter's own bytes. BYTES is a count of bytes,
decimal or ``0x...``, from 1 to :data:`MAX_GLOBAL_BYTES` (the whole launch's global memory,
which every buffer and tensor map of it share: ``trace.kernel.launch``).
"""

from __future__ import annotations

import re

from ...plumbing.errors import shorten

#: the value text of a pointer to a zero-filled buffer: ``zeros:BYTES``
ZEROS = "zeros:"
#: the global memory of a launch (every buffer and tensor map, reserved but only touched pages
#: are real): 64 GiB of address space
MAX_GLOBAL_BYTES = 64 << 30
#: what BYTES may be, in words
BOUND = f"a count of bytes from 1 to {MAX_GLOBAL_BYTES:,} (64 GiB), decimal or 0x..."
_BYTES = re.compile(r"(0[xX][0-9a-fA-F]{1,16}|[0-9]{1,20})\Z")


def size_of(text: str) -> int | None:
    """BYTES (``text``: what follows ``zeros:``) where it is a size within the bound."""
    t = text.strip()
    if not _BYTES.match(t):
        return None
    size = int(t[2:], 16) if t[:2].lower() == "0x" else int(t, 10)  # 010 is ten
    return size if 0 < size <= MAX_GLOBAL_BYTES else None


def size_error(text: str) -> str:
    """Why BYTES ``text`` is refused: the bound, and what was given."""
    return f"{ZEROS}BYTES wants {BOUND} (e.g. {ZEROS}4096), got {shorten(text.strip())!r}"


def not_at_an_offset(key: str | None, value: str) -> str:
    """Why ``KEY=zeros:...`` (no ``+OFFSET``) is refused, in one sentence wherever it is given
    (``--arg``, a spec's ``kernel.args``): the key to write (``KEY+0``; ``NAME+0`` where the
    key is not known), and what is wrong with the size too, where it is (its bound)."""
    v = value.strip()
    size = v[len(ZEROS) :]
    wrong = "" if size_of(size) is not None else f"; {size_error(size)}"
    k = shorten(key.strip()) if key and key.strip() else "NAME"
    return (
        f"{shorten(v)!r} is a pointer to a new zero-filled buffer, given at a byte offset of "
        f"the parameter: write the key as {k}+0{wrong}"
    )
