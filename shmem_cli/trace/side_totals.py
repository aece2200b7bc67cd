"""What a trace reports beside its shared-memory accesses: the instructions it does not model
(:class:`NotModelled`: TMA copies through maps not given, remote accesses, calls outside the
cubin), the remote accesses' totals (:class:`DsmemTotals`), the instructions that cost
Nsight's ``op_misc`` wavefronts (:class:`MiscRow`, :class:`MiscTotals`) and the generic
atomics whose ``op_atom`` wavefronts no access row carries (:class:`GenericAtomRow`)."""

from __future__ import annotations

from typing import Any

from ..plumbing.frozen import frozen


@frozen
class NotModelled:
    """An instruction whose shared-memory traffic shmem does not model: a TMA copy through a
    tensor map not given, a remote (distributed shared memory) access, a call to a function
    outside the cubin."""

    pc: int
    sass: str
    file: str | None
    line: int | None
    executions: int  # warp-level executions
    # a remote (distributed shared memory) access: the 32-byte sectors it moved over the
    # crossbar (Nsight's l1tex__m_xbar2l1tex_read_sectors_mem_dshared), else None
    dsmem_sectors: int | None = None
    # a call to a function outside the cubin, stepped over (printf's vprintf): its name
    callee: str | None = None
    # a remote atomic or reduction: the wavefronts it adds to Nsight's op_atom counter
    # (hardware.dsmem.generic_atom_wavefronts); 0 for any other instruction
    atom_wavefronts: int = 0
    # a remote access whose addresses global data decided, and the buffers it came from
    data_dependent: bool = False
    data_from: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "pc": self.pc,
            "sass": self.sass,
            "executions": self.executions,
            "dsmem_sectors": self.dsmem_sectors,
            "atom_wavefronts": self.atom_wavefronts,
            "callee": self.callee,
            "data_dependent": self.data_dependent,
            "data_from": list(self.data_from),
        }


@frozen
class MiscRow:
    """An instruction that costs Nsight's ``op_misc`` wavefronts (a warp's end, a CTA
    barrier, a GPU-scope memory barrier, a shared instruction a warp reaches with no lane on:
    :mod:`shmem_cli.hardware.misc`), with its warp executions."""

    pc: int
    sass: str
    file: str | None
    line: int | None
    # warp executions: warps with a lane on (an EXIT: the warps it ended); of a shared
    # instruction, the warps that reached it with no lane on
    executions: int
    wavefronts: int  # op_misc wavefronts: executions times the instruction's rule

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "pc": self.pc,
            "sass": self.sass,
            "executions": self.executions,
            "wavefronts": self.wavefronts,
        }


@frozen
class GenericAtomRow:
    """A generic atomic (``ATOM``) that shared memory did not serve, on global memory or
    declined there (a 32-bit float, half2 or bf16x2 add, whose fall-back loop's rows are
    accesses of their own), with the ``op_atom`` wavefronts Nsight's per-op counter counts
    for it and its source counters do not (:func:`shmem_cli.hardware.dsmem.
    generic_atom_wavefronts`): in ``totals.atomic``, in no access row and no line's totals."""

    pc: int
    sass: str
    file: str | None
    line: int | None
    wavefronts: int

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "pc": self.pc, "sass": self.sass,
                "wavefronts": self.wavefronts}  # fmt: skip


@frozen
class MiscTotals:
    """The ``op_misc`` wavefronts (docs/hardware-model.md, 9e): the warp executions of the
    instructions that cost them (``requests``) and the wavefronts (Nsight's
    ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc``); ideal equals them (no lane
    addresses: nothing to conflict)."""

    requests: int = 0
    wavefronts: int = 0

    def to_json(self) -> dict[str, int]:
        return {"requests": self.requests, "wavefronts": self.wavefronts,
                "ideal_wavefronts": self.wavefronts}  # fmt: skip


@frozen
class DsmemTotals:
    """Distributed shared memory (docs/hardware-model.md, 9d): the warp requests of the
    remote loads, stores and atomics (Nsight's ``smsp__sass_inst_executed_op_dshared_*``),
    the 32-byte sectors they moved over the crossbar (``l1tex__m_xbar2l1tex_read_sectors_mem_
    dshared``) and the wavefronts the remote atomics add to Nsight's ``op_atom`` counter
    (loads and stores cost no shared-memory wavefronts)."""

    requests: int = 0
    sectors: int = 0
    wavefronts: int = 0  # the remote atomics' op_atom wavefronts

    def to_json(self) -> dict[str, int]:
        return {"requests": self.requests, "wavefronts": self.wavefronts,
                "ideal_wavefronts": self.wavefronts, "sectors": self.sectors}  # fmt: skip
