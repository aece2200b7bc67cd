"""The SM a cubin is for, read from its ELF header as NVIDIA's tools read it.

NVIDIA's tools write two layouts, told apart by ``e_ident[EI_ABIVERSION]`` (byte 8; the
OS/ABI byte 7 goes with it: 0x33 for the first, 0x41 for the second):

================ ==================================== =====================================
                 ABI version 7 and older               ABI version 8
================ ==================================== =====================================
written by       ptxas up to CUDA 12.x (Triton 3.2-3.6 ptxas of CUDA 13 (nvcc 13, Triton 3.7
                 bundle 12.4 / 12.8)                   on for Hopper, PyTorch's Inductor)
real SM          ``e_flags`` bits 0-7                  ``e_flags`` bits 8-15
virtual SM       bits 16-23                            not in ``e_flags``
``a`` (sm_90a)   bit 11 (0x800)                        bit 3 (0x8), or the ``.nv.compat``
                                                       record EICOMPAT_ATTR_CUDA_ACCELERATOR_
                                                       TARGET (0x09) = 1, where ptxas 13.0
                                                       puts it
other bits       8 texture mode unified, 10 64-bit     bits 0-2 and 24-31: not read
                 addresses
================ ==================================== =====================================

Seen on cubins made here (tests/data/cubin_abi/README.md): ptxas 12.4 and 12.8 write
``0x5a055a`` for sm_90 and ``0x5a0d5a`` for sm_90a (ABI 7); ptxas 13.0 writes ``0x6005a04``
for both sm_90 and sm_90a (ABI 8), the ``a`` only in ``.nv.compat``; cuobjdump 13 reads all
four as sm_90 / sm_90a. Reading bits 8-15 of an ABI-7 cubin gives 5 or 13 (its flag bits),
not an SM.
"""

from __future__ import annotations

from ....plumbing.errors import ShmemError
from ....plumbing.frozen import frozen

ABI_V2 = 8  # the first ABI version of the second layout
#: the oldest SM a cubin is for (sm_20, the first of ELF cubins): a smaller number is a header
#: read by the other layout (an ABI byte that lies: ABI 8's 0x6005a04 read as 7 is sm_4)
MIN_SM = 20
ACCEL_V1 = 0x800
ACCEL_V2 = 0x8
EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET = 0x09
EIFMT_BVAL = 2  # a one-byte value
EIFMT_HVAL = 3  # a two-byte value
EIFMT_SVAL = 4  # a 16-bit length and that many bytes


@frozen
class CubinArch:
    """A cubin's target: SM number, whether it is the ``a`` (architecture-specific) variant,
    and the ELF ABI version it was read from."""

    sm: int
    accelerated: bool
    abi: int

    @property
    def base(self) -> str:
        """``sm_90``: the name shared-memory rules are looked up by."""
        return f"sm_{self.sm}"

    @property
    def name(self) -> str:
        """``sm_90a`` for the architecture-specific variant, else ``sm_90``."""
        return self.base + ("a" if self.accelerated else "")


def cubin_arch(abi_version: int, flags: int, compat: bytes | None, path: str = "") -> CubinArch:
    """The target of a cubin with ``EI_ABIVERSION`` ``abi_version``, ``e_flags`` ``flags`` and
    its ``.nv.compat`` section's bytes (None without one); an SM below :data:`MIN_SM` is "not
    a valid cubin" (of the file at ``path``), never costed as another's."""
    if abi_version >= ABI_V2:
        sm = (flags >> 8) & 0xFF
        accelerated = bool(flags & ACCEL_V2) or compat_flag(
            compat, EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET
        )
    else:
        sm = flags & 0xFF
        accelerated = bool(flags & ACCEL_V1)
    if sm < MIN_SM:
        raise ShmemError(
            f"not a valid cubin: its ELF header names sm_{sm} (e_flags {flags:#x} read by the "
            f"layout of ABI version {abi_version}), which no GPU is: its ABI byte (byte 8) or "
            "e_flags is damaged; rebuild it",
            path=path,
            code="invalid-kernel",
        )
    return CubinArch(sm=sm, accelerated=accelerated, abi=abi_version)


def compat_flag(body: bytes | None, attribute: int) -> bool:
    """Whether the ``.nv.compat`` record ``attribute`` is there with a value other than 0.

    Records are a format byte, an attribute byte, then a one-byte value and a padding byte
    (EIFMT_BVAL), a two-byte value (EIFMT_HVAL), or a two-byte length and that many bytes
    (EIFMT_SVAL); a record of another format ends the reading."""
    if not body:
        return False
    pos = 0
    while pos + 4 <= len(body):
        fmt, attr = body[pos], body[pos + 1]
        if fmt == EIFMT_SVAL:
            length = int.from_bytes(body[pos + 2 : pos + 4], "little")
            value = body[pos + 4 : pos + 4 + length]
            pos += 4 + length
        elif fmt in (EIFMT_BVAL, EIFMT_HVAL):
            value = body[pos + 2 : pos + (3 if fmt == EIFMT_BVAL else 4)]
            pos += 4
        else:
            return False
        if attr == attribute:
            return any(value)
    return False
