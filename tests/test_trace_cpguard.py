"""A pipelined cp.async whose guard is its src-size (tests/data/trace/cpguard, the project's
own kernel, not measured): the prologue's copy and the loop's prefetch are 16-byte
``cp.async.cg`` with src-size 16 or 0 (``LDGSTS.E.BYPASS.128 ..., P0``), as Triton lowers its
pipelined loads. By the H200's ``.cg`` rule (lanes that copy cost nothing, zero-filling
lanes write like a 16-byte store: measured.json's ``cp_pattern_16_cg_*``) only the prologue
of an empty loop and the last turn's prefetch past the end cost: 4 wavefronts a warp (128 B
a quarter-warp, 16-byte lanes side by side), 4 warps."""

from __future__ import annotations

import pytest

import shmem_cli

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "cpguard" / "cpguard.sm_90.cubin"


def _rows(tiles: int) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The prologue's and the loop's cp.async (requests, wavefronts); None where it never ran."""
    kernel = shmem_cli.trace(CUBIN, block=(128,), args={"tiles": tiles}).kernel
    copies = {a.site.sass.rsplit(", ", 1)[1]: a for a in kernel.accesses if a.op == "cp_async"}
    assert set(copies) <= {"P0", "!P0"}
    assert all(a.site.opcode == "LDGSTS.E.BYPASS.128" for a in copies.values())
    cost = {k: (a.cost.requests, a.cost.wavefronts) for k, a in copies.items()}
    return cost.get("P0"), cost.get("!P0")


@needs_nvdisasm
@pytest.mark.parametrize(
    ("tiles", "prologue", "loop"),
    [
        (0, (4, 16), None),  # tile 0 does not exist: the prologue zero-fills, no loop
        (1, (4, 0), (4, 16)),  # the only turn's prefetch is past the end
        (2, (4, 0), (8, 16)),  # the first turn's prefetch copies (free), the last zero-fills
        (4, (4, 0), (16, 16)),
    ],
)
def test_only_the_zero_filling_copies_cost(
    tiles: int, prologue: tuple[int, int], loop: tuple[int, int] | None
) -> None:
    assert _rows(tiles) == (prologue, loop)
