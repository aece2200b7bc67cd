"""The shared arrays of a traced kernel, and which array each instruction touches.

A cubin built with ``-lineinfo`` (as ``shmem trace`` compiles) keeps the PTX it was
assembled from in its ``.nv_debug_ptx_txt`` section; every static ``__shared__``
variable is declared there as ``.shared .align A .b8 NAME[BYTES];``. ptxas places the
kernel's variables in that order, each at a multiple of its alignment, from the start
of the kernel's own static shared memory (after the driver's reserved part). A
kernel's variables are those its ``.entry`` body names (a variable of an inlined
device function too). Dynamic shared memory (``extern __shared__``) is one region
after them, unless the user names its parts (``--array NAME=OFFSET:BYTES``, offsets
from the start of the dynamic region).

An instruction belongs to an array when every active lane's access lies inside it;
one that spans two arrays (or none) is left unassigned and no layout change moves it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...hardware import ops
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ..kernel.cubin import Kernel, read_section

if TYPE_CHECKING:
    from ..requests import InstructionRecords

PTX_SECTION = ".nv_debug_ptx_txt"
# a line's leading blanks are [ \t]: "^\s*" ran on through every blank line after it, at every
# one of them (quadratic: a PTX section of zeros, read as line ends, never ended)
_SHARED_DECL = re.compile(
    r"^[ \t]*(?:\.extern\s+)?\.shared\s+\.align\s+(\d+)\s+\.b8\s+([A-Za-z_$][\w$]*)\[(\d*)\]\s*;",
    re.M,
)
_ENTRY = re.compile(r"^[ \t]*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)\s*\(", re.M)
_ARRAY_OPTION = re.compile(
    r"^([A-Za-z_]\w{0,200})=(0[xX][0-9a-fA-F]{1,8}|[0-9]{1,10}):(0[xX][0-9a-fA-F]{1,8}|[0-9]{1,10})\Z"
)


@frozen
class SharedArray:
    """One shared-memory array: where it lies in the block's shared window (bytes)."""

    name: str  # as written in the source: As
    symbol: str  # as the PTX names it: _ZZ10warp_sgemmPfPKfS1_iiiE2As (or the --array name)
    offset: int  # start in the block's shared window (the trace's addresses)
    size: int  # bytes
    align: int
    dynamic: bool = False

    @property
    def end(self) -> int:
        return self.offset + self.size


def source_name(symbol: str) -> str:
    """``As`` from a function-local variable's mangled name ``_ZZ...E2As`` (else the symbol)."""
    m = re.search(r"E(\d+)([A-Za-z_]\w*)$", symbol)
    if symbol.startswith("_ZZ") and m and int(m.group(1)) == len(m.group(2)):
        return m.group(2)
    return symbol


def ptx_shared_arrays(ptx: str, mangled: str) -> list[tuple[str, int, int]]:
    """(symbol, bytes, alignment) of the shared variables the kernel's ``.entry`` names, in
    declaration order (``extern`` ones, whose size is open, are left out)."""
    entries = list(_ENTRY.finditer(ptx))
    body = ""
    for k, m in enumerate(entries):
        if m.group(1) == mangled:
            end = entries[k + 1].start() if k + 1 < len(entries) else len(ptx)
            body = ptx[m.end() : end]
    if not body:
        return []
    out = []
    for m in _SHARED_DECL.finditer(ptx):
        align, symbol, size = int(m.group(1)), m.group(2), m.group(3)
        if size and re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", body):
            out.append((symbol, int(size), align))
    return out


def static_arrays(cubin: str | Path, kernel: Kernel) -> tuple[SharedArray, ...]:
    """The kernel's static ``__shared__`` arrays, placed as ptxas places them.

    Without the PTX (a cubin built without ``-lineinfo``), or when the placement does not
    add up to the kernel's static shared memory, the whole static region is one array
    named ``static shared``."""
    whole = (
        (
            SharedArray(
                "static shared",
                "",
                kernel.reserved_shared_bytes,
                kernel.static_shared_bytes,
                16,
            ),
        )
        if kernel.static_shared_bytes
        else ()
    )
    raw = read_section(cubin, PTX_SECTION)
    if raw is None:
        return whole
    ptx = raw.decode("utf-8", errors="replace").replace("\0", "\n")
    declared = ptx_shared_arrays(ptx, kernel.mangled)
    out = []
    at = 0
    for symbol, size, align in declared:
        at = -(-at // align) * align
        out.append(
            SharedArray(source_name(symbol), symbol, kernel.reserved_shared_bytes + at, size, align)
        )
        at += size
    if not out or at > kernel.static_shared_bytes:
        return whole
    return tuple(out)


def parse_array_option(text: str) -> tuple[str, int, int]:
    """``NAME=OFFSET:BYTES`` (decimal or 0x hexadecimal): a part of dynamic shared memory."""
    m = _ARRAY_OPTION.match(text.strip())
    if not m:
        raise ShmemError(
            f"--array expects NAME=OFFSET:BYTES (offset from the start of dynamic shared "
            f"memory, e.g. --array As=0:8192), got {shorten(text)!r}",
            code="invalid-launch",
        )
    offset, size = int(m.group(2), 0), int(m.group(3), 0)
    if size < 1:
        raise ShmemError(
            f"--array {shorten(text)}: BYTES must be at least 1", code="invalid-launch"
        )
    return m.group(1), offset, size


def kernel_arrays(
    static: Sequence[SharedArray],
    kernel: Kernel,
    dynamic_smem: int,
    named: Sequence[tuple[str, int, int]] = (),
) -> tuple[SharedArray, ...]:
    """The static arrays, then dynamic shared memory: the ``--array`` parts, or one region."""
    base = kernel.dynamic_shared_base
    taken = {a.name for a in static}
    dynamic = []
    for name, offset, size in named:
        if offset + size > dynamic_smem:
            raise ShmemError(
                f"--array {name}={offset}:{size} ends at byte {offset + size:,} of dynamic shared "
                f"memory, but the launch gives {dynamic_smem:,} B (--dynamic-smem)",
                code="invalid-launch",
            )
        if name in taken:
            raise ShmemError(f"--array {name}: the name is given twice", code="invalid-launch")
        taken.add(name)
        dynamic.append(SharedArray(name, name, base + offset, size, 16, dynamic=True))
    spans = sorted(dynamic, key=lambda a: a.offset)
    for a, b in zip(spans, spans[1:], strict=False):
        if b.offset < a.end:
            raise ShmemError(f"--array {a.name} and {b.name} overlap", code="invalid-launch")
    if not dynamic and dynamic_smem:
        dynamic.append(SharedArray("dynamic shared", "", base, dynamic_smem, 16, dynamic=True))
    return (*static, *dynamic)


def array_of(rec: InstructionRecords, arrays: Sequence[SharedArray]) -> SharedArray | None:
    """The array every active lane of every request of the instruction lies in, or None."""
    addr, active = rec.rows()
    if not active.any():
        return None
    lanes = addr[active]
    low, high = int(lanes.min()), int(lanes.max()) + rec.kind.size
    if ops.get(rec.kind.op).matrix:
        high = int(lanes.max()) + 16
    for a in arrays:
        if a.offset <= low and high <= a.end:
            return a
    return None
