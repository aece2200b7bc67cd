"""64-bit forms Triton's Hopper kernels use: UIADD3.64 with a negated pair (a wgmma
descriptor stepped back), worked out by hand."""

from __future__ import annotations

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import Block, Launch

from .test_trace_ops import _program


def _registers_after(body: str) -> Block:
    kept: list[Block] = []
    run_block = execute.run_block

    def keep(function, program, blk, **kw):  # type: ignore[no-untyped-def]
        kept.append(blk)
        return run_block(function, program, blk, **kw)

    execute.run_block = keep
    try:
        execute.run(_program(body), Launch(block=(32, 1, 1), static_smem=1024))
    finally:
        execute.run_block = run_block
    return kept[0]


def test_uiadd3_64_adds_register_pairs_and_negates_a_minus_pair() -> None:
    blk = _registers_after(
        """UMOV UR6, 0x40
UMOV UR7, 0x40000040
UMOV UR24, 0xfffffffe
UMOV UR25, 0x7fffffdf
UIADD3.64 UR24, UR6, -UR24, URZ
EXIT"""
    )
    # 0x40000040_00000040 - 0x7fffffdf_fffffffe = 0xc0000060_00000042 (mod 2^64)
    assert (int(blk.ur[24][0]), int(blk.ur[25][0])) == (0x00000042, 0xC0000060)
