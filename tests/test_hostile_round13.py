"""Hostile launches and kernels of the thirteenth adversarial round (docs/robustness.md, "What
was found and fixed", item 13): well-formed kernels that claim or cause too much work. Each ends
with a result or a located error (exit status 2) in seconds and under 1 GiB
(:func:`tests.hostile.refused`).

The kernels are tests/data/hostile/hostile3.cu (its cubin kept; build.sh there).
"""

from __future__ import annotations

import pytest

from shmem_cli.hardware.arch import rules_for

from .conftest import needs_nvdisasm
from .hostile import HOSTILE, refused, shmem

pytestmark = needs_nvdisasm

CUBIN3 = HOSTILE / "hostile3.sm_90.cubin"


def _trace(kernel: str, *args: str) -> tuple[str, ...]:
    return ("trace", str(CUBIN3), "-k", kernel, "--no-tables", *args)


@pytest.mark.slow  # 3-6 s
def test_blocks_that_wait_on_later_ones_holding_all_their_shared_memory_stay_bounded() -> None:
    # 65,536 blocks of 1,024 threads and 227 KiB of shared memory, each waiting on the next:
    # batch after batch is set aside. Their parked threads kept an 8-byte index per byte of
    # their CTAs' shared memory, and the state counted against the bound was a third of what
    # they held: 25 batches, 3.7 GB (an out-of-memory error under a 3 GB limit, 28 s). Now
    # every array a batch keeps is counted, and the bound is 512 MiB: about 3 s and 600 MB.
    ran = shmem(*_trace("chain_smem", "-b", "1024", "--dynamic-smem", "232448", "-g", "65536"))
    refused(
        ran,
        "hostile3.cu:14:1: error: a batch of blocks waits on memory that blocks not run yet "
        "may write (re-reading 'flag'+",
        "but no more batches are set aside to run them: ",
        "MiB of state (at most 64 batches, 512 MiB)",
        "trace fewer blocks (--grid)",
    )
    assert "can never end" not in ran.text  # later blocks would end it


@pytest.mark.parametrize(
    ("dims", "box", "rank"),
    [("64x64x64x64x64", "16x16x16x16x16", 5), ("4096", "256", 1)],
)
def test_a_tma_copy_through_a_map_of_another_rank_is_refused_at_the_copy(
    dims: str, box: str, rank: int
) -> None:
    # a 5-D map under a 2-D copy was "internal emulator error: tuple index out of range"; a
    # 1-D one was read with the copy's second coordinate ignored
    tensor = f"map=tensormap:dtype=u8,dims={dims},box={box}"
    ran = shmem(*_trace("tma_2d", "-b", "32", "--dynamic-smem", "4096", "-a", tensor, "-a", "tx=0"))
    refused(
        ran,
        f"hostile3.cu:32:1: error: a 2-D TMA copy through a tensor map of rank {rank}",
        "give a map of rank 2",
    )
    assert "internal emulator error" not in ran.text


def test_a_tma_copy_through_a_map_of_its_rank_runs() -> None:
    tensor = "map=tensormap:dtype=u8,dims=64x64,box=16x16"
    args = ("-b", "32", "--dynamic-smem", "4096", "-a", tensor, "-a", "tx=256")
    ran = shmem(*_trace("tma_2d", *args))
    assert ran.code == 0, ran.text[-2000:]
    assert "TMA load of 256 B into shared" in ran.text


def test_a_tma_copy_outside_the_shared_memory_names_the_copy() -> None:
    # without --dynamic-smem the box lands past the block's shared memory: the error said
    # "shared access of 1 bytes" (the first byte checked), the TMA copy unnamed
    tensor = "map=tensormap:dtype=u8,dims=64x64,box=16x16"
    ran = shmem(*_trace("tma_2d", "-b", "32", "-a", tensor, "-a", "tx=256"))
    refused(
        ran,
        "hostile3.cu:32:1: error: the TMA load's shared destination at 0x480 is outside the "
        "block's shared memory (0x480 bytes",
        "give --dynamic-smem if the kernel uses extern __shared__",
    )


def test_a_stack_frame_larger_than_the_traces_stack_is_said_so() -> None:
    # a 1 MiB local array was blamed on calls nesting too deep ("a recursion that does not
    # end?") in a kernel that makes no call
    ran = shmem(*_trace("big_frame", "-b", "32", "-a", "n=10"))
    refused(
        ran,
        "hostile3.cu:48:1: error: local access at 0xfff04000, below the stack: the kernel's "
        "stack frame (local arrays, spills) is larger than the 16,384 bytes the trace gives",
    )
    assert "recursion" not in ran.text


@pytest.mark.parametrize(
    ("kernel", "block", "said"),
    [
        # 215 registers a thread (EIATTR_REGCOUNT): 27 units of 256 a warp, 9 warps an SM
        (
            "many_regs",
            "512",
            "--block 512,1,1 (512 threads): many_regs takes 215 registers a thread: an sm_90 "
            "SM's 65,536 hold 288 threads of it, and CUDA refuses a larger block",
        ),
        # __launch_bounds__(256) (EIATTR_MAX_THREADS)
        (
            "bounded",
            "16,16,2",
            "--block 16,16,2 (512 threads): bounded was built for at most 256 threads a block "
            "(__launch_bounds__), and CUDA refuses a larger launch",
        ),
    ],
)
def test_a_block_cuda_refuses_to_launch_is_refused(kernel: str, block: str, said: str) -> None:
    # both were traced as if CUDA had launched them ("too many resources requested for launch"
    # on the GPU)
    refused(shmem(*_trace(kernel, "-b", block)), f"hostile3.sm_90.cubin: error: {said}")


@pytest.mark.parametrize(("kernel", "block"), [("many_regs", "288"), ("bounded", "16,16")])
def test_the_largest_block_cuda_launches_is_traced(kernel: str, block: str) -> None:
    ran = shmem(*_trace(kernel, "-b", block))
    assert ran.code == 0, ran.text[-2000:]


@pytest.mark.parametrize(
    ("registers", "threads"),
    [(32, 2048), (64, 1024), (65, 896), (128, 512), (215, 288), (255, 256)],
)
def test_the_threads_an_sm_has_registers_for(registers: int, threads: int) -> None:
    # registers go to a warp 256 at a time (8 a thread): 65,536 of them on an H200's SM (65:
    # 9 x 256 = 2,304 a warp, 28 warps)
    assert rules_for("sm_90").most_threads(registers) == threads


def test_a_layout_search_over_too_many_distinct_requests_is_refused_before_it_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 256 blocks of `distinct` (every request differs) traced in 20 s, then searched for
    # layouts past 5 minutes; the bound is lowered here so that one block passes it
    from click.testing import CliRunner

    from shmem_cli.cli import main
    from shmem_cli.trace.fixes import layout_search

    monkeypatch.setattr(layout_search, "MAX_SEARCH_ROWS", 10)
    args = ["trace", str(HOSTILE / "hostile.sm_90.cubin"), "-k", "distinct", "-b", "64"]
    res = CliRunner().invoke(main, [*args, "-a", "n=8", "--no-tables", "--suggest"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "hostile.sm_90.cubin: error: --suggest: the traced requests of array s hold " in said
    assert "distinct ones; the layout search costs at most 10 (each under every" in said
    assert "trace fewer blocks (--grid) to search, or leave --suggest out" in said
    assert "Traceback" not in said


def test_a_layout_search_over_too_many_distinct_requests_of_all_arrays_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the bound of each array is raised out of the way and the kernel's lowered: the arrays
    # with a conflict together (here one, of 8 iterations x 2 warps' distinct requests)
    from click.testing import CliRunner

    from shmem_cli.cli import main
    from shmem_cli.trace.fixes import layout_search

    monkeypatch.setattr(layout_search, "MAX_SEARCH_ROWS", 1 << 30)
    monkeypatch.setattr(layout_search, "MAX_KERNEL_SEARCH_ROWS", 10)
    args = ["trace", str(HOSTILE / "hostile.sm_90.cubin"), "-k", "distinct", "-b", "64"]
    res = CliRunner().invoke(main, [*args, "-a", "n=8", "--no-tables", "--suggest"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "error: --suggest: the traced requests of the 1 array with a conflict hold " in said
    assert "distinct ones (s " in said
    assert "the layout search costs at most 10 for a kernel" in said
    assert "Traceback" not in said


def test_zeros_for_a_whole_pointer_parameter_says_where_it_goes() -> None:
    ran = shmem(*_trace("tma_2d", "-b", "32", "-a", "out=zeros:4096"))
    refused(ran, "'zeros:4096' is a pointer to a new zero-filled buffer, given at a byte offset")
    assert "write the key as out+0" in ran.text
