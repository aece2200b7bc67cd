"""The trace's budget (issue 28): a kernel that never ends is stopped in seconds with an error
placed at its loop (source lines and SASS offsets) that says how to raise the budget; a grid
larger than CUDA allows is refused at once; in ``shmem lint`` one runaway kernel
does not keep the other specs' results from coming. The Python API checks its arguments.

The budget's defaults (trace/emulator/budget.py) let a 4096 x 4096 transpose of 16,384
blocks through: tests/test_trace_everyday.py's slow test traces it with them.
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import shmem_cli
from shmem_cli.analysis import cost
from shmem_cli.cli import main
from shmem_cli.cuda.sass import Instruction
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.testing import assert_no_bank_conflicts
from shmem_cli.trace.aggregate import trace_access
from shmem_cli.trace.distinct_rows import RecordsFull
from shmem_cli.trace.emulator import budget
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.recorder import Recorder

from .conftest import HANG_S, TRACE_DATA, needs_nvdisasm
from .hostile import CUBIN, CUBIN2, PEAK_LIMIT_MIB, quiet, refused, shmem
from .test_trace_folds import same_but_the_note

SPIN = ("trace", str(CUBIN), "-k", "spin")
# the loop of hostile.cu's spin: lines 8-11, SASS 0x0130-0x01d0 (nvdisasm of the kept cubin)
LOOP = "looping in hostile.cu:8-11 (pc 0x0130-0x01d0)"
# hostile2.cu's count_forever: a loop whose state never repeats (a shared counter grows)
COUNT = ("trace", str(CUBIN2), "-k", "count_forever")
COUNT_LOOP = "looping in hostile2.cu:12-13 (pc 0x00a0-0x00e0)"


@needs_nvdisasm
@pytest.mark.slow  # it runs the whole default budget; test_each_budget_can_be_set's are fast
@pytest.mark.parametrize("threads", ["32", "1024"])
def test_an_endless_loop_is_stopped_at_its_loop(threads: str) -> None:
    ran = shmem(*COUNT, "-b", threads)
    per = f"{budget.PER_THREAD:,} per thread x {int(threads):,} threads"
    at = "hostile2.cu:12:1: error: block (0,0,0) ran "
    refused(ran, at, per, COUNT_LOOP, "--max-instructions", seconds=150)


@needs_nvdisasm
@pytest.mark.parametrize("threads", ["32", pytest.param("1024", marks=pytest.mark.slow)])
def test_a_loop_that_repeats_its_state_is_stopped_at_once(threads: str) -> None:
    # spin's i goes 0, 1, 3, 7, ... 2^32 - 1 and stays: after 32 iterations every thread's
    # state is the one before, with nothing written: it can never end
    ran = shmem(*SPIN, "-b", threads)
    why = f"error: block (0,0,0) can never end: its {int(threads):,} running thread(s) came back"
    refused(ran, "hostile.cu:9:1: ", why, LOOP)  # "can never end": not the budget's message


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(
    ("option", "fragments"),
    [
        # a few steps of 32 threads past 3,200
        (("--max-instructions", "100"), ("ran 3,2", "budget: 100 per thread x 32 threads")),
        (
            ("--max-launch-instructions", "5000"),
            ("the launch ran 5,0", "(the budget is 5,000)", "raise --max-launch-instructions"),
        ),
        (
            ("--time-limit", "0.5"),
            ("the trace ran past its time limit of 0.5 s in block (0,0,0)", "raise --time-limit"),
        ),
    ],
)
def test_each_budget_can_be_set(option: tuple[str, str], fragments: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*COUNT, "-b", "32", *option])
    assert result.exit_code == 2, result.output
    assert "hostile2.cu:12:1: error: " in result.output
    for fragment in fragments:
        assert fragment in result.output


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--time-limit", "nan", "'--time-limit': must be a number of seconds"),
        ("--time-limit", "NaN", "'--time-limit': must be a number of seconds"),
        ("--time-limit", "inf", "inf is not in the range"),
        ("--time-limit", "0", "0 is not in the range"),
        ("--max-instructions", "0", "0 is not in the range"),
        ("--max-launch-instructions", "1" + "0" * 40, "is not in the range"),
    ],
)
def test_a_budget_that_is_no_number_is_refused(option: str, value: str, message: str) -> None:
    # NaN passes a range check (every comparison with it is false): it would mean no limit
    result = CliRunner().invoke(main, [*SPIN, "-b", "32", option, value])
    assert result.exit_code == 2, result.output
    assert message in result.output, result.output
    assert "Traceback" not in result.output


@needs_nvdisasm
def test_a_grid_larger_than_cuda_allows_is_refused_at_once() -> None:
    trivial = ("trace", str(CUBIN), "-k", "trivial", "-b", "32")
    refused(
        shmem(*trivial, "-g", "1,65536"),
        "--grid 1,65536: y is at most 65,535 (CUDA's largest grid)",
    )
    refused(shmem(*trivial, "-g", "2147483648"), "x is at most 2,147,483,647")


def _distinct(bound: int | None, grid: int = 512) -> Any:
    """hostile.cu's distinct kernel (no two requests alike) over ``grid`` blocks of 256
    threads, four stores each, its records bounded by ``bound`` bytes (None: the default)."""
    small = budget.DEFAULT if bound is None else budget.Budget(recorded_bytes=bound)
    request = TraceRequest(
        CUBIN, kernel="distinct", block=(256, 1, 1), grid=(grid, 1, 1), args=("n=4",), budget=small
    )
    return trace_file(request).kernels[0]


@pytest.mark.slow
@needs_nvdisasm
def test_records_past_their_bound_are_folded_and_the_totals_stay_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30: records that reach their bound are costed, summed per instruction and
    dropped, and the trace goes on; every per-instruction figure and the whole JSON are what
    the run whose records all fit gives, and the records never held more than the bound."""
    bound = 3 << 19  # 1.5 MiB: 512 blocks' distinct requests take about 11
    held: list[int] = []
    fold = Recorder.fold

    def watched(self: Recorder) -> bool:
        held.append(sum(r.recorded_bytes for r in self.by_index.values()))
        return fold(self)

    whole = _distinct(None)
    assert not held and whole.records_note is None
    monkeypatch.setattr(Recorder, "fold", watched)
    folded = _distinct(bound)
    assert len(held) >= 3, held  # folded several times
    assert max(held) <= bound, held
    assert all(r.folded.cost is not None for r in folded.records)
    assert [a.cost.requests for a in whole.accesses] == [512 * 8] * 5  # four stores, a load
    assert sum(a.cost.conflicted_requests for a in whole.accesses) > 0
    same_but_the_note(whole, folded)


@pytest.mark.slow
@needs_nvdisasm
def test_a_grid_whose_records_pass_the_bound_is_traced_whole_not_sampled() -> None:
    """2,048 blocks of 32 distinct requests: about 2.3 MiB of records, past half a 1.5 MiB
    bound (where the grid used to be sampled): every block is traced, and counted."""
    kernel = _distinct(3 << 19, grid=2048)
    assert kernel.launch.blocks_traced == 2048
    assert kernel.launch.coverage is not None and kernel.launch.coverage.mode == "whole"
    assert [a.cost.requests for a in kernel.accesses] == [2048 * 8] * 5
    assert kernel.records_note is not None


@needs_nvdisasm
def test_a_batch_of_blocks_past_the_bound_alone_is_refused() -> None:
    """Folding frees the whole bound, but one batch's requests must fit in it."""
    refusal = "records passed 0 MiB by block .* of 512 \\(the requests of one instruction"
    with pytest.raises(ShmemError, match=refusal):
        _distinct(1 << 16)


STS = Instruction(0x40, None, "STS", (), (), "k.cu", 7, "STS [R2], R5")
STS32 = AccessKind("store", 4)


def test_records_grow_within_their_bound_their_copies_included() -> None:
    """Every execution brings new distinct rows: the records grow (twice, then by what is
    left) and are refused before an allocation would take them past the bound, the copy
    made while an array grows included, in a few dozen steps at most."""
    limit = 1 << 20
    recorder = Recorder(32, limit)
    tids, warp_ids = np.arange(4 * 32), np.arange(4)
    sizes: set[int] = set()
    tracemalloc.start()
    try:
        with pytest.raises(RecordsFull):
            for k in range(1_000_000):
                addr = (tids % 32) * 4 + 128 * (tids // 32) + 512 * k  # rows never seen
                recorder.record(0, STS, STS32, tids, addr, 0, warp_ids)
                sizes.add(len(recorder.by_index[0].warp))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rec = recorder.by_index[0]
    assert rec.recorded_bytes <= limit
    assert rec.n > limit // (2 * (9 * 32 + 100 + 18))  # at least half the bound was used
    assert peak < limit + (256 << 10), peak  # arrays, copies and the hash table: the bound
    assert len(sizes) < 40, sorted(sizes)


def test_a_site_is_costed_a_part_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine never gets more than PART rows at once, nor are more than PART requests
    summed at once; the answer is the one worked out by hand."""
    recorder = Recorder(32)
    tids, warp_ids = np.arange(2000 * 32), np.arange(2000)
    lane, warp = tids % 32, tids // 32
    addr = lane * (4 << (warp % 3)) + 128 * (warp % 1000)  # a row per warp; 1, 2 or 4 ways
    for _ in range(5):
        recorder.record(0, STS, STS32, tids, addr, 0, warp_ids)
    (rec,) = recorder.instructions()
    engine: list[int] = []
    parts: list[int] = []
    rows_stats, totals = cost.rows_stats, cost.stats_totals

    def counted_rows(a: Any, *rest: Any) -> Any:
        engine.append(len(a))
        return rows_stats(a, *rest)

    def counted_totals(stats: Any, *rest: Any) -> Any:
        parts.append(len(stats.wavefronts))
        return totals(stats, *rest)

    monkeypatch.setattr(cost, "PART", 512)
    monkeypatch.setattr(cost, "rows_stats", counted_rows)
    monkeypatch.setattr(cost, "stats_totals", counted_totals)
    access = trace_access(rec, SM90, warps=2000, warps_per_block=2000, blocks=1)
    assert max(engine) == 512 and sum(engine) == 2000  # each distinct row once
    assert max(parts) == 512 and sum(parts) == 10_000
    # by hand: lanes 4, 8 and 16 bytes apart take 1, 2 and 4 wavefronts
    n0, n1, n2 = (len(range(r, 2000, 3)) for r in range(3))
    assert access.cost.requests == 10_000
    assert access.cost.wavefronts == 5 * (n0 + 2 * n1 + 4 * n2)
    assert access.cost.lane_accesses == 10_000 * 32
    assert access.cost.shown is not None
    assert (access.cost.shown.warp, access.cost.shown.wavefronts) == (2, 4)  # the first worst


@needs_nvdisasm
# 16,384 blocks; test_records_past_their_bound_are_folded_and_the_totals_stay_exact is the
# fast one of its kind
@pytest.mark.slow
def test_requests_that_fill_the_records_stay_under_1_gib() -> None:
    """16,384 blocks of a kernel whose every request differs: the records are folded at their
    bound, and the whole grid is traced."""
    distinct = ("trace", str(CUBIN), "-k", "distinct", "-b", "1024", "-g", "16384", "-a", "n=2")
    ran = shmem(*distinct, "--no-tables", timeout=300)
    assert ran.code == 0, ran.text[-2000:]
    assert "passed the records' bound (384 MiB)" in ran.text
    # the records' 384 MiB and the costing of a fold beside them (about 510 MiB measured)
    assert ran.peak_mib < PEAK_LIMIT_MIB, ran.peak_mib


@needs_nvdisasm
@pytest.mark.slow
def test_many_requests_of_one_instruction_stay_under_1_gib() -> None:
    """One store in a loop over 16,384 blocks: 10 and 21 million requests (their records and
    costing peaked at 1.3 GiB). The blocks are proven alike, so the first is traced and counted
    for all; records of blocks that differ are bounded (the distinct kernel, above)."""
    repeat = ("trace", str(CUBIN), "-k", "repeat", "-b", "1024", "-g", "16384", "--no-tables")
    ran = shmem(*repeat, "-a", "n=20", timeout=300)
    assert ran.code == 0, ran.text[-2000:]
    assert "10,485,760" in ran.text
    assert ran.peak_mib < 512, ran.peak_mib
    more = shmem(*repeat, "-a", "n=40", timeout=300)
    assert more.code == 0, more.text[-2000:]
    assert "20,971,520" in more.text
    assert more.peak_mib < 512, more.peak_mib


@needs_nvdisasm
def test_the_python_api_takes_the_budget() -> None:
    with pytest.raises(ShmemError) as err:
        shmem_cli.trace(CUBIN, kernel="spin", block=32, max_instructions=50)
    assert err.value.code == "trace"
    assert LOOP in err.value.message
    assert (Path(err.value.path or "").name, err.value.line) == ("hostile.cu", 9)


@pytest.mark.slow  # 10-20 s; tests/test_hostile_kernels.py keeps a bad file among good ones fast
@needs_nvdisasm
def test_one_runaway_kernel_does_not_stop_lint(tmp_path: Path) -> None:
    shutil.copy(CUBIN, tmp_path / "k.cubin")
    for name in ("spin", "trivial"):
        (tmp_path / f"{name}.yaml").write_text(
            "block: [32]\narrays:\n  s: {dtype: int32, shape: [32]}\naccesses:\n"
            f"  - {{name: {name} store, array: s, op: store, index: [lane]}}\n"
            f"kernel:\n  source: k.cubin\n  name: {name}\n"
        )
    for jobs in ("1", "2"):  # in the command itself, and in worker processes
        ran = shmem("lint", str(tmp_path), "-j", jobs)
        assert ran.code == 0, ran.text
        assert ran.seconds < HANG_S  # a liveness guard; the spin stopped by its state:
        assert "kernel 'spin' was not traced" in ran.text
        assert "block (0,0,0) can never end" in ran.text
        assert "the compiled kernel trivial has store STS" in ran.text  # the other one's result
        quiet(ran)  # no worker, no temporary file left; nothing written


# --- the Python API's arguments -----------------------------------------------------------------

COLUMN = TRACE_DATA / "column_read.sm_90.cubin"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (dict(path=5, block=32), "trace(): path must be a file path (a str or a pathlib.Path)"),
        (dict(block=32.5), "trace(): block must be a positive integer or a sequence of 1 to 3"),
        (dict(block=(32, 0)), "block sizes must be at least 1, got 32,0"),
        (dict(block=True), "block must be"),
        (dict(block=32, kernel=5), "trace(): kernel must be a str or None, got an int (5)"),
        (dict(block=32, args=[1, 2]), "trace(): args must be a mapping (a dict), got a list"),
        (
            dict(block=32, args={"n": 10**5000}),
            "args['n'] is not a kernel argument: it must be a number that fits in 64 bits",
        ),
        (
            dict(block=32, args={"n": object()}),
            "args['n'] is not a kernel argument: it must be a number, a list",
        ),
        (
            dict(block=32, args={(1,): 2}),
            "a key of args is not a kernel argument: it must be a parameter",
        ),
        (
            dict(block=32, args={"a": [1] * 5000}),
            "args['a'] is not a kernel argument: it must be 1 to 4,096 numbers",
        ),
        (dict(block=32, grid=10**5000), "grid (huge): x is at most 2,147,483,647"),
        (dict(block=32, dynamic_smem=-5), "dynamic_smem must be an integer between 0 and"),
        (dict(block=32, buffer_size=2**70), "buffer_size must be an integer between 1 and"),
        (dict(block=32, nvcc_args="-O3"), "nvcc_args must be a list of str, got a str"),
        (dict(block=32, arch=90), "trace(): arch must be a str or None, got an int (90)"),
        (dict(block=32, arch="90"), "arch must be an architecture such as 'sm_90'"),
        (dict(block=32, time_limit=float("nan")), "time_limit must be a positive number"),
        (dict(block=32, max_instructions=0), "max_instructions must be an integer between 1 and"),
        # the command line's bounds: 2^40 per thread, 2^50 a launch, 86,400 s
        (dict(block=32, max_instructions=2**70), "between 1 and 1,099,511,627,776, got an int"),
        (dict(block=32, max_launch_instructions=2**51), "between 1 and 1,125,899,906,842,624"),
        (dict(block=32, time_limit=1e9), "time_limit must be a positive number of seconds between"),
    ],
)
def test_the_trace_api_names_a_wrong_argument(call: dict[str, Any], message: str) -> None:
    kwargs = {"path": COLUMN, **call}
    with pytest.raises(ShmemError) as err:
        shmem_cli.trace(**kwargs)
    assert message in err.value.message, err.value.message
    assert len(err.value.message) < 300


def test_numpy_integers_are_integers() -> None:
    result = shmem_cli.trace(COLUMN, block=np.int64(32), grid=(np.int32(2),))
    assert result.kernel.launch.block == (32, 1, 1)
    assert result.kernel.launch.grid == (2, 1, 1)
    with pytest.raises(ShmemError, match="block must be a positive integer"):
        shmem_cli.trace(COLUMN, block=np.bool_(True))


def test_a_huge_array_argument_is_refused_before_it_is_copied() -> None:
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(1 << 30,), strides=(0,))
    with pytest.raises(ShmemError, match=r"it must be a buffer of at most 128 MiB"):
        shmem_cli.trace(COLUMN, block=32, args={"a": big})


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: shmem_cli.analyze(5), "analyze(): source must be a file path"),
        (lambda: shmem_cli.analyze(None), "analyze(): source must be a file path, got None"),
        (lambda: assert_no_bank_conflicts(None), "assert_no_bank_conflicts(): result must be"),
        (lambda: assert_no_bank_conflicts("x.yaml"), "result must be what shmem_cli.trace"),
    ],
)
def test_the_other_calls_name_a_wrong_argument(call: Any, message: str) -> None:
    with pytest.raises(ShmemError) as err:
        call()
    assert message in err.value.message.replace(" (a str or a pathlib.Path)", "")
    assert err.value.code == "invalid-argument"


def test_allow_is_checked_and_read_once() -> None:
    spec = {
        "block": [32],
        "arrays": {"a": {"dtype": "float32", "shape": [32, 32]}},
        "accesses": [{"name": "column", "array": "a", "index": ["lane", 0]}],
    }
    result = shmem_cli.analyze(spec)
    assert_no_bank_conflicts(result, allow=(name for name in ["column"]))  # a generator
    with pytest.raises(ShmemError, match="allow must be a list of source lines"):
        assert_no_bank_conflicts(result, allow=5)
    with pytest.raises(AssertionError, match="access 'column'"):
        assert_no_bank_conflicts(result, allow=["0xzz", "0x" + "f" * 5000])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(fn=5, signature={}), "trace_triton(): fn must be a @triton.jit function"),
        (dict(signature=[1]), "trace_triton(): signature must be a mapping"),
        (dict(signature={"x": 5}), "signature must be a mapping of names to Triton types"),
        (dict(signature={}, num_warps=0), "num_warps must be an integer between 1 and 32"),
        (dict(signature={}, grid=2.5), "grid must be a positive integer or a sequence"),
        (dict(signature={}, arch="sm_90"), "arch must be an integer between 10 and 999"),
        (dict(signature={}, keep=7), "keep must be a file path"),
    ],
)
def test_trace_triton_names_a_wrong_argument(kwargs: dict[str, Any], message: str) -> None:
    kwargs.setdefault("fn", len)  # any callable: the arguments are checked first
    with pytest.raises(ShmemError) as err:
        shmem_cli.trace_triton(**kwargs)
    assert message in err.value.message
    assert err.value.code == "invalid-argument"
