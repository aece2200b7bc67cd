"""Blocks that differ only through the block index, traced once per class (issue 30,
shmem_cli/trace/emulator/alike/): the differential check.

Each kernel of tests/data/trace/classes/classes.cu takes its decisions from the block index
through another kind of integer operation (a remainder or a quotient by a constant, shifts
and masks, min/max, a causal loop bound, two axes at once, a remainder by a runtime value),
or from something the proof must refuse (shared memory written from the block index, the
clock, a float). The reference is the same launch with every block run (the tracer's path
for a caller that reads global memory afterwards): totals, every instruction's cost and the
thread-instructions must be equal. Where the count is simple it is also said by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .hostile import shmem
from .test_trace_grid import classes_of, every_block, traced

CLASSES = TRACE_DATA / "classes" / "classes.sm_90.cubin"
# the same kernels for sm_80: its code reads blockDim and the parameters from the bank
CLASSES_80 = TRACE_DATA / "classes" / "classes.sm_80.cubin"
N = 256  # threads of a block (classes.cu)


def _same(
    kernel: str,
    grid: tuple[int, int, int],
    args: tuple[str, ...],
    cubin: Any = CLASSES,
    block: int = N,
    **kw: Any,
) -> Any:
    """The launch traced by class, checked against every block run; returns it."""
    by_class = traced(cubin, kernel, block, grid, args, **kw)
    ran = every_block(cubin, kernel, block, grid, args, **kw)
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert by_class.totals == ran.totals
    assert by_class.instructions_executed == ran.instructions_executed
    assert by_class.launch.blocks_traced == ran.launch.blocks_traced
    for a, b in zip(by_class.accesses, ran.accesses, strict=True):
        assert (a.site.pc, a.cost.totals, a.cost.lane_accesses, a.predicated_off) == (
            b.site.pc,
            b.cost.totals,
            b.cost.lane_accesses,
            b.predicated_off,
        )
    return by_class


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "grid", "args", "classes"),
    [
        pytest.param(
            "cl_mod", (12, 1, 1), (), 3, marks=pytest.mark.slow
        ),  # stride 1 + b % 3 (fast below)
        ("cl_div", (40, 1, 1), ("1=3",), 2),  # b / 5 < 3: blocks 0-14 and the rest
        ("cl_bits", (16, 1, 1), (), 4),  # (b >> 2) & 1 and (b & 3) == 2
        pytest.param(
            "cl_axes", (6, 4, 2), ("1=5",), 4, marks=pytest.mark.slow
        ),  # x + 2y < 5, and z == 1
        ("cl_min", (12, 1, 1), ("1=5",), 6),  # min(b, 5) trips: 0, 1, 2, 3, 4, 5+
    ],
)
def test_decisions_through_integer_operations_make_classes(
    kernel: str, grid: tuple[int, int, int], args: tuple[str, ...], classes: int
) -> None:
    traced_ = _same(kernel, grid, args)
    cov = traced_.launch.coverage
    blocks = grid[0] * grid[1] * grid[2]
    assert cov is not None and cov.mode == "alike" and classes <= cov.run <= blocks
    assert f"the {blocks} blocks fall into {classes} classes" in (cov.proof or "")


@needs_nvdisasm
@pytest.mark.parametrize(
    "n",
    [
        256,
        pytest.param(512, marks=pytest.mark.slow),
        pytest.param(1024, marks=pytest.mark.slow),
        300,
    ],
)
def test_a_remainder_by_a_runtime_value_is_exact(n: int) -> None:
    # (b * 256 + t) % n: n = 300 gives each block its own lanes (every block runs)
    traced_ = _same("cl_rem", (16, 1, 1), (f"1={n}",))
    cov = traced_.launch.coverage
    assert cov is not None
    assert cov.mode == ("whole" if n == 300 else "alike")


@needs_nvdisasm
def test_a_causal_loop_bound_makes_a_class_per_row() -> None:
    # block (x, y) loops x + 1 times, then max(y, 1) times: rows y = 0 and 1 alike
    grid = (8, 3, 1)
    traced_ = _same("cl_causal", grid, ("1=64",))
    cov = traced_.launch.coverage
    # rows 0 and 1 alike: a block of row 1 stands for its twin of row 0, or ran beside it
    assert cov is not None and cov.mode == "alike" and cov.run < 24
    loads = sum(8 * ((x + 1) + max(y, 1)) for y in range(grid[1]) for x in range(grid[0]))
    assert traced_.totals["load"].requests == traced_.totals["load"].wavefronts == loads
    assert traced_.totals["store"].requests == 8 * grid[0] * grid[1]


@needs_nvdisasm
def test_the_remainder_kernel_by_hand() -> None:
    # stride 1 + b % 3 words: 1, 2 (two-way: 2 wavefronts) and 3 words (1 wavefront)
    traced_ = _same("cl_mod", (12, 1, 1), ())
    per_block = {0: 8, 1: 16, 2: 8}
    wavefronts = sum(per_block[b % 3] for b in range(12))
    assert traced_.totals["load"].requests == 12 * 8
    assert traced_.totals["load"].wavefronts == wavefronts


@needs_nvdisasm
@pytest.mark.parametrize("kernel", ["cl_smem", "cl_clock", "cl_float"])
def test_decisions_the_proof_cannot_evaluate_run_every_block(kernel: str) -> None:
    traced_ = _same(kernel, (6, 1, 1), ())
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 6
    assert cov.differs is not None and "classes.cu:" in cov.differs


@needs_nvdisasm
def test_causal_attention_is_one_class_per_row_of_keys() -> None:
    # cl_attn: block (x, y) walks (x + 1) steps of 8 reads a warp (8 warps), y decides nothing
    grid = (8, 4, 1)
    traced_ = _same("cl_attn", grid, ("1=64",))
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 8
    loads = grid[1] * sum(64 * (x + 1) for x in range(grid[0]))
    assert traced_.totals["load"].requests == traced_.totals["load"].wavefronts == loads


@needs_nvdisasm
def test_the_rounds_end_where_watching_costs_more_than_running_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # cl_attn's 8 classes of 4 over (8, 4): with no floor, the first block's watched round
    # costs 4 x (1 + 8) = 36 times a block run plainly, past a quarter of the 32 blocks of
    # the grid run plainly and the 3 its class saves: its class (blocks (0, y)) stands, and
    # the 28 others run in plain batches
    from shmem_cli.trace.emulator.alike import spend

    monkeypatch.setattr(spend, "FLOOR", 0)
    grid = (8, 4, 1)
    traced_ = _same("cl_attn", grid, ("1=64",))
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 1 + 28
    assert "4 of the 32 blocks fall into 1 class" in (cov.proof or "")
    assert "The rounds ended after 1 block run watched" in (cov.proof or "")
    loads = grid[1] * sum(64 * (x + 1) for x in range(grid[0]))
    assert traced_.totals["load"].requests == traced_.totals["load"].wavefronts == loads


@needs_nvdisasm
def test_clusters_alike_by_class() -> None:
    # cl_cluster: clusters of 2 CTAs, cluster c loops c % 3 + 1 times with its rank's stride
    # and reads its peer's tile: 12 clusters, 3 classes, a cluster of each traced (6 CTAs)
    traced_ = _same("cl_cluster", (24, 1, 1), ())
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 6
    assert "the 12 clusters fall into 3 classes" in (cov.proof or "")
    assert traced_.launch.blocks_traced == 24


@needs_nvdisasm
@pytest.mark.parametrize(
    ("grid", "args"),
    [
        ((8, 1, 1), ("1=37", "2=4", "3=500")),
        pytest.param((16, 1, 1), ("1=100", "2=4", "3=1500"), marks=pytest.mark.slow),
    ],
)
def test_a_persistent_kernels_tile_walk_is_exact_by_class(
    grid: tuple[int, int, int], args: tuple[str, ...]
) -> None:
    # cl_persist: each block's trip count, tile rows (a runtime divisor) and columns come
    # from blockIdx.x + k * gridDim.x
    traced_ = _same("cl_persist", grid, args)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike"


@needs_nvdisasm
@pytest.mark.parametrize(("grid", "n"), [((8, 1, 1), 1000), ((40, 1, 1), 3000)])
def test_a_bounds_check_through_blockdim_read_from_the_bank(
    grid: tuple[int, int, int], n: int
) -> None:
    # sm_80's IMAD R0, R6, c[0x0][0x0], R7: blockIdx.x * blockDim.x + t < n; the blocks
    # wholly inside, the one cut and those wholly outside are three classes
    traced_ = _same("cl_bdim", grid, (f"1={n}",), CLASSES_80)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and classes_of(cov) == 3
    # a warp reads where its first lane is inside (n is a multiple of 8 here)
    warps = sum(1 for b in range(grid[0]) for w in range(8) if b * N + 32 * w < n)
    assert traced_.totals["load"].requests == warps


@needs_nvdisasm
@pytest.mark.parametrize(
    "kernel",
    [
        "cl_mod",
        pytest.param("cl_persist", marks=pytest.mark.slow),
        "cl_two",
        pytest.param("cl_sdiv", marks=pytest.mark.slow),
    ],
)
def test_sm80_code_by_class(kernel: str) -> None:
    args = ("1=100", "2=4", "3=1500") if kernel == "cl_persist" else ()
    grid = {"cl_persist": (16, 1, 1), "cl_two": (60, 1, 1), "cl_sdiv": (42, 1, 1)}.get(
        kernel, (12, 1, 1)
    )
    traced_ = _same(kernel, grid, args, CLASSES_80)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike"


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "grid", "classes"),
    [
        # a = b * 7 % 13 < c = (b * 3 + t / 64) % 11, and b % 5 <= b / 3 % 4 (both sides move)
        ("cl_two", (60, 1, 1), None),  # the rounds end on small classes: the rest run
        ("cl_udiv", (40, 1, 1), 5),  # (t + 64) / (b % 5 + 1): a class per divisor
        ("cl_sdiv", (42, 1, 1), 6),  # (t - 128) / s, s = b % 7 - 3 (0 read as 2): six divisors
    ],
)
def test_two_moving_sides_and_divisions_by_a_block_value_make_classes(
    kernel: str, grid: tuple[int, int, int], classes: int | None
) -> None:
    traced_ = _same(kernel, grid, ())
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run < grid[0]
    assert classes is None or classes_of(cov) == classes


@needs_nvdisasm
def test_a_compare_with_one_side_without_a_form_is_not_evaluated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (int)(b * 0.5f) > b % 4 with the FMUL left out of the evaluated instructions (as before
    # it was one): the float side has no form; read as the first block's value it put blocks 4
    # and up (whose outcome differs) in block 0's class
    from shmem_cli.trace.emulator.alike import evaluated, forms

    without = forms.EVALUATED - {"FMUL"}
    monkeypatch.setattr(forms, "EVALUATED", without)
    monkeypatch.setattr(evaluated, "EVALUATED", without)  # (looked_at's)
    traced_ = _same("cl_half", (12, 1, 1), ())
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 12
    assert cov.differs is not None and "classes.cu:" in cov.differs


@needs_nvdisasm
def test_a_compare_of_a_float_product_of_the_block_index_is_evaluated() -> None:
    # the same kernel with FMUL evaluated (CUTLASS 3.x's scheduler divides the block index so):
    # both sides have forms, and the blocks fall into classes, as every block run counts them
    traced_ = _same("cl_half", (12, 1, 1), ())
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run < 12


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "grid", "args", "classes"),
    [
        ("cl_div", (40, 1, 1), ("1=3",), 2),
        ("cl_causal", (8, 3, 1), ("1=64",), None),
        # the other kernels' classes are checked without the window by the tests above
        *(
            pytest.param(*case, marks=pytest.mark.slow)
            for case in (
                ("cl_rem", (16, 1, 1), ("1=512",), None),
                ("cl_persist", (16, 1, 1), ("1=100", "2=4", "3=1500"), None),
                ("cl_two", (60, 1, 1), (), None),
                ("cl_sdiv", (42, 1, 1), (), 6),
            )
        ),
    ],
)
def test_vectors_kept_as_steps_and_read_by_window_give_the_same_classes(
    monkeypatch: pytest.MonkeyPatch,
    kernel: str,
    grid: tuple[int, int, int],
    args: tuple[str, ...],
    classes: int | None,
) -> None:
    # every instruction's vectors kept as its step (as past 2^21 values on a large grid) and
    # evaluated over windows of a few blocks: the same classes and totals as every block run,
    # and as the vectors kept whole
    from shmem_cli.trace.emulator.alike import vectors

    whole = traced(CLASSES, kernel, N, grid, args).launch.coverage
    monkeypatch.setattr(vectors, "EAGER", 0)
    monkeypatch.setattr(vectors, "ELEMENTS", 4096)
    traced_ = _same(kernel, grid, args)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and whole is not None
    assert (cov.run, classes_of(cov)) == (whole.run, classes_of(whole))
    assert classes is None or classes_of(cov) == classes


DIFFER = TRACE_DATA / "cluster" / "differ.sm_90.cubin"


@pytest.mark.slow
@needs_nvdisasm
def test_16384_differing_blocks_by_class_against_every_block() -> None:
    # differ.cu's remainder (b * 256 + t) % n by a runtime n: 256 groups of threads, each
    # with its own vector over the grid (past 2^21 values: kept as steps); block b loops
    # b % 32 + 1 times
    grid = (16384, 1, 1)
    traced_ = _same("differ", grid, ("2=1048576",), DIFFER, buffer_size=16384 * N * 4)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run < 64


@pytest.mark.slow
@needs_nvdisasm
def test_65536_differing_blocks_by_class_in_bounded_memory(tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    ran = shmem(
        "trace", str(DIFFER), "-k", "differ", "-b", "256", "-g", "65536", "-a", "2=1048576",
        "--buffer-size", str(65536 * 256 * 4), "-f", "json", "-o", str(out), timeout=300,
    )  # fmt: skip
    assert ran.code == 0, ran.text
    assert ran.peak_mib < 1024, ran.peak_mib
    kernel = json.loads(out.read_text())["files"][0]["kernels"][0]
    cov = kernel["grid_coverage"]
    assert cov["mode"] == "alike" and cov["blocks_run"] < 64, cov
    # each iteration: two reads of one wavefront a warp (strides 3 and 1), 8 warps a block
    loads = sum(8 * 2 * (b % 32 + 1) for b in range(65536))
    totals = kernel["totals"]
    assert (totals["load"]["requests"], totals["load"]["wavefronts"]) == (loads, loads)
    assert (totals["store"]["requests"], totals["store"]["wavefronts"]) == (65536 * 8,) * 2


@needs_nvdisasm
def test_vectors_past_their_work_leave_the_decision_unproven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the remainder's steps kept, and too little work allowed to evaluate them: the guard
    # on (b * 256 + t) % n is not proven, every block runs, and the totals are exact
    from shmem_cli.trace.emulator.alike import vectors

    monkeypatch.setattr(vectors, "EAGER", 0)
    monkeypatch.setattr(vectors, "WORK", 1000)
    traced_ = _same("cl_rem", (16, 1, 1), ("1=512",))
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 16
    assert cov.differs is not None and "classes.cu:92" in cov.differs


def test_a_round_holding_every_class_left_is_expected_to_be_the_last() -> None:
    from shmem_cli.trace.emulator.alike.together import how_many, is_last

    # causal attention, 64 x 32 blocks: after 21 classes of 32 blocks (672), the 1,376 left
    # make 43 classes if as large: a round of 43 holds them all, one of 42 does not
    assert how_many(1376, 672, 21, 64) == 43
    assert is_last(1376, 672, 21, 43) and not is_last(1376, 672, 21, 42)
    # a remainder: the 25 blocks left after one class of 15 make 2 classes at least
    assert not is_last(25, 15, 1, 1) and is_last(25, 15, 1, 2)


@needs_nvdisasm
def test_a_round_expected_to_be_the_last_may_take_most_of_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # cl_mod: stride 1 + b % 3, 12 blocks in 3 classes of 4. After block 0's class, the 8
    # blocks left make 2 classes if as large: a round of 2 is expected to be the last, and
    # may take LAST_SHARE of the time left where another round takes 1/ROUND_SHARE (made
    # nil: such a round would be cut short at once). Every class is found
    from shmem_cli.trace.emulator.alike import classes

    monkeypatch.setattr(classes, "ROUND_SHARE", 1e12)
    whole = traced(CLASSES, "cl_mod", N, (12, 1, 1), ())
    cov = whole.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 3
    assert "the 12 blocks fall into 3 classes" in (cov.proof or "")


@needs_nvdisasm
def test_a_round_past_its_share_of_the_time_left_keeps_the_classes_found_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # cl_div: b / 5 < 3, blocks 0-14 one class. Each round after the first may take a share
    # of the time left (--time-limit): made nil, the second round (block 15) is cut short at
    # once, its records dropped. No error: the first class stands, the 25 blocks in no class
    # are not traced, and the report says so
    from shmem_cli.trace.emulator.alike import classes

    monkeypatch.setattr(classes, "ROUND_SHARE", 1e12)
    cut = traced(CLASSES, "cl_div", N, (40, 1, 1), ("1=3",))
    cov = cut.launch.coverage
    assert cov is not None and cov.mode == "sample" and cov.run == 1
    assert "was cut short" in (cov.sampled or "")
    assert "25 blocks in no class not traced" in (cov.sampled or "")
    assert "The 25 blocks in no class were not traced" in (cov.proof or "")
    first = every_block(CLASSES, "cl_div", N, (15, 1, 1), ("1=3",))  # block 0's class
    assert cut.totals == first.totals
    assert cut.instructions_executed == first.instructions_executed
    for a, b in zip(cut.accesses, first.accesses, strict=True):
        assert (a.site.pc, a.cost.totals, a.predicated_off) == (
            b.site.pc,
            b.cost.totals,
            b.predicated_off,
        )
