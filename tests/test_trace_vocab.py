"""A loop over a vocabulary whose global addresses are 64 bits (tests/data/trace/vocab: the
project's own kernel, the shape of llm.c's fused classifier): each step's address is a
register pair whose high word takes the low word's carry, which differs block by block.

The block-alike proof made a form for every register on the block index, the high word too:
a vector over the grid's blocks for each of the block's 256 groups of threads (the carry
groups the threads by their constants), at every step of the loop (llm.c's classifier at
V = 50,257 over 1,024 blocks: 16.8 s of CPU where its block took 3.1). No decision reads that
word (it only places global loads and stores), and the proof now makes no form a decision
cannot reach (:func:`shmem_cli.trace.emulator.alike.evaluated.needed`).
"""

from __future__ import annotations

from shmem_cli.trace.emulator.access_kind import shared_op_of
from shmem_cli.trace.emulator.alike.watch import Chooser
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.tracer import find_function

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "vocab" / "vocab_rows.sm_90.cubin"


def _args(rows: int, v: int) -> tuple[str, ...]:
    return (f"2={rows}", f"3={v}", f"4={v}")  # rows, V, P (the row's stride: V)


@needs_nvdisasm
def test_a_vocabulary_loop_on_64_bit_addresses_is_proven_alike_over_a_large_grid() -> None:
    # 8,188 rows of 1,024 logits over 1,024 blocks of 8 warps (the last block's warps 4-7
    # return at once): each row's warp stores its running sum at each of its 32 steps (lanes
    # i = lane + 32 s: 32 consecutive words, 1 wavefront) and reads it back once
    kernel = traced(CUBIN, "vocab_rows", 256, (1024, 1, 1), _args(8188, 1024), buffer_size=1 << 25)
    totals = kernel.totals
    assert (totals["store"].requests, totals["store"].wavefronts) == (8188 * 32, 8188 * 32)
    assert (totals["load"].requests, totals["load"].wavefronts) == (8188, 8188)
    cov = kernel.launch.coverage
    # the full blocks and the last block with 4 rows: 2 classes, their first blocks run
    assert cov is not None and cov.mode == "alike" and cov.run == 2 and cov.blocks == 1024
    assert classes_of(cov) == 2


@needs_nvdisasm
def test_the_alike_totals_are_every_blocks() -> None:
    # 508 rows over 64 blocks: 508 x 32 stores, 508 loads, alike as when every block runs
    args = _args(508, 1024)
    kernel = traced(CUBIN, "vocab_rows", 256, (64, 1, 1), args)
    assert (kernel.totals["store"].requests, kernel.totals["load"].requests) == (508 * 32, 508)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 2
    assert every_block(CUBIN, "vocab_rows", 256, (64, 1, 1), args).totals == kernel.totals


@needs_nvdisasm
def test_no_form_is_made_for_an_address_high_word() -> None:
    info, disassembly = cubin(CUBIN)
    function = find_function(disassembly, find_kernel(info, "vocab_rows"), info.path)
    program = decode_function(function)
    kinds = [shared_op_of(ins) for ins in function.instructions]
    need = Chooser(program, function, kinds).needed
    ins = function.instructions
    high = [m for m, x in enumerate(ins) if x.opcode == "LEA" and {"HI", "X"} <= set(x.mods)]
    assert len(high) >= 4 and not any(need[m] for m in high)  # the addresses' high words
    # the row's guard and the loops' compares decide; the block index reaches them
    assert all(need[m] for m, x in enumerate(ins) if x.opcode == "ISETP")
    assert all(need[m] for m, x in enumerate(ins) if x.opcode == "S2R")
