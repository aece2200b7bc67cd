"""Hostile kernels and launches of the second round (issue 28): spins that can never end (a
lock no block releases, a flag no block sets, an mbarrier no one arrives on) stopped in
seconds, a recursion deeper than the stack and calls out of the code refused, cluster
attributes a launch cannot have, and tensor maps and descriptors past what TMA encodes. Each
ends with a located error and exit status 2 (or a result), no traceback, in seconds and
under 1 GiB (:func:`tests.hostile.refused`).

The kernels are tests/data/hostile/hostile2.cu (its cubin kept); the cubins with a patched
attribute or instruction are made here from it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from .conftest import HANG_S, TEST_DATA, TRACE_DATA, needs_nvdisasm
from .hostile import CUBIN, CUBIN2, refused, shmem

pytestmark = needs_nvdisasm


def _trace(kernel: str, *args: str, cubin: Path = CUBIN2) -> tuple[str, ...]:
    return ("trace", str(cubin), "-k", kernel, "--no-tables", *args)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kernel", "threads", "grid", "loop"),
    [
        # a thread takes the lock (atomicExch) and nobody gives it back: every CAS fails
        ("lock_spin", "256", "1", "hostile2.cu:"),
        # a volatile flag in a zero-filled buffer: the first block waits, set aside, while the
        # three others run together; they wait too, and no block wrote the flag
        ("wait_flag", "1024", "4", "looping in hostile2.cu:23 "),
    ],
)
def test_a_spin_that_can_never_end_is_stopped_at_once(
    kernel: str, threads: str, grid: str, loop: str
) -> None:
    ran = shmem(*_trace(kernel, "-b", threads, "--grid", grid))
    last = int(threads) * (int(grid) - 1 if int(grid) > 1 else 1)  # the batch stopped
    refused(ran, "can never end", f"its {last:,} running thread(s) came back", loop)
    # "can never end" is said by the repeat check, at once: the instruction budget (30-130 s)
    # says "ran N thread-instructions without ending" instead
    assert "without ending" not in ran.text


def test_a_spin_in_a_cluster_is_stopped_at_once() -> None:
    ran = shmem(*_trace("wait_flag", "-b", "1024", "--grid", "16", "--cluster", "16"))
    refused(ran, "error: a batch of blocks can never end: its 16,384 running thread(s)")


def test_a_spin_on_a_peer_ctas_shared_memory_in_a_cluster_is_stopped_at_once() -> None:
    # 16,384 threads spin on remote loads (3 instructions an iteration): the first look at
    # the batch's state comes after 64 iterations (some 3.2M thread-instructions), not 1,024
    # (50M), which a launch budget of 8M checks whatever the machine's load; and a remote
    # load's sectors are counted in a millisecond: 1-2 s in all, 13 s before (timed by make
    # bench, bench/hostile.py; the budget here proves the first look came early)
    spin = _trace("wait_peer", "-b", "1024", "--grid", "16", "--cluster", "16")
    ran = shmem(*spin, "--max-launch-instructions", "8000000")
    refused(ran, "error: a batch of blocks can never end: its 16,384 running thread(s)")


def test_an_mbarrier_no_one_arrives_on_is_a_deadlock() -> None:
    ran = shmem(*_trace("mbar_never", "-b", "64"))
    refused(
        ran,
        "error: deadlock: warp(s) 0-1 wait for phase parity 0 of the mbarrier",
        # the likely cause, where a GPU ran the kernel: a launch other than the host's
        "\n  is the launch the host program's? --block, --cluster and --params decide which warps",
    )


def test_a_loop_that_changes_its_state_runs_to_its_end() -> None:
    # hostile.cu's repeat: one store in a loop of n; 3,000 iterations pass the first look
    # at the block's state (1,024 executions) with the loop counter differing each time
    ran = shmem("trace", str(CUBIN), "-k", "repeat", "-b", "32", "-a", "n=3000", "--no-tables")
    assert ran.code == 0, ran.text[-2000:]
    assert "3,000" in ran.text  # the store's requests: one per iteration of the one warp


def test_a_recursion_deeper_than_the_stack_is_refused_at_its_function() -> None:
    # each call of down takes 16 bytes of the thread's stack in local memory
    ran = shmem(*_trace("recurse", "-b", "32", "-a", "n=1000000000"))
    refused(ran, "hostile2.cu:49:1: error: local access at 0xfffffff8, below the stack")


def _patched(tmp_path: Path, name: str, old: bytes, new: bytes) -> Path:
    data = CUBIN2.read_bytes()
    assert data.count(old) >= 1
    out = tmp_path / f"{name}.cubin"
    out.write_bytes(data.replace(old, new, 1))
    return out


# calls_twice's CALL.REL.NOINC 0x100 at 0xb0 (its first 8 bytes; nvdisasm of the kept cubin)
CALL = struct.pack("<Q", 0x0000000000107944)


@pytest.mark.parametrize(
    ("word", "target"),
    [
        (0x00000000FFF07944, "0x480"),
        pytest.param(0x0000000000117944, "0x104", marks=pytest.mark.slow),
    ],
)
def test_a_call_outside_the_code_is_refused(tmp_path: Path, word: int, target: str) -> None:
    # 0x480: past the function's end; 0x104: inside an instruction
    cubin = _patched(tmp_path, "call", CALL, struct.pack("<Q", word))
    ran = shmem(*_trace("calls_twice", "-b", "32", cubin=cubin))
    refused(ran, f"hostile2.cu:111:1: error: the kernel calls a function outside it at {target}")


def _trace_with(cubin: Path, *args: str) -> tuple[str, ...]:
    return ("trace", str(cubin), "-k", "clustered", "--no-tables", *args)


# clustered's EIATTR_CTA_PER_CLUSTER record: format 4, attribute 0x3d, 12 bytes, 2 x 1 x 1
CLUSTER = b"\x04\x3d\x0c\x00" + struct.pack("<III", 2, 1, 1)


@pytest.mark.parametrize(
    ("dims", "why"),
    [
        ((0, 1, 1), "(rebuild it): sizes must be at least 1, got 0"),
        pytest.param(
            (0xFFFFFFFF, 1, 1), "is 4,294,967,295 in all; the most is 16", marks=pytest.mark.slow
        ),
        pytest.param(
            (16, 16, 16),
            "(rebuild it): 16,16,16 is 4,096 in all; the most is 16",
            marks=pytest.mark.slow,
        ),
        pytest.param((1 << 20, 1 << 20, 1), "is 1,099,511,627,776 in all", marks=pytest.mark.slow),
    ],
)
def test_a_cluster_attribute_cuda_cannot_launch_is_refused(
    tmp_path: Path, dims: tuple[int, int, int], why: str
) -> None:
    cubin = _patched(tmp_path, "cluster", CLUSTER, CLUSTER[:4] + struct.pack("<III", *dims))
    ran = shmem(*_trace_with(cubin, "-b", "32", "--grid", "4096"))
    refused(ran, "error: the cubin's __cluster_dims__ of clustered (rebuild it): ", why)


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (
            ("--grid", "3"),
            "the grid's x (3) is not a multiple of the cluster's (2, the kernel's "
            "__cluster_dims__): CUDA launches whole clusters only; give --grid 4",
        ),
        (("--grid", "4", "--cluster", "4"), "the kernel declares __cluster_dims__(2, 1, 1)"),
        pytest.param(
            ("--grid", "32", "--cluster", "17"),
            "--cluster 17 is 17 in all; the most is 16",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_launches_the_declared_cluster_does_not_allow(args: tuple[str, ...], why: str) -> None:
    refused(shmem(*_trace_with(CUBIN2, "-b", "32", *args)), why)


def test_the_largest_grid_of_alike_clusters_is_answered_in_seconds() -> None:
    ran = shmem(*_trace_with(CUBIN2, "-b", "32", "--grid", "2147483646,65535,65535"))
    assert ran.code == 0, ran.text[-2000:]
    assert "every cluster behaves alike" in ran.text  # one cluster traced, not 2^63 blocks
    assert ran.seconds < HANG_S and ran.peak_mib < 1024


TMA = TRACE_DATA / "hopper" / "tma_probe.sm_90a.cubin"
MAP = "1=tensormap:dtype=u32,dims=64x128,box=32x64"


@pytest.mark.parametrize(
    ("first", "why"),
    [
        # one row at a stride of 2^36 bytes: within the memory bound, past the stride words
        ("0=tensormap:dtype=u32,dims=64x1,box=32x1,strides=68719476736", "64 GiB or more"),
        pytest.param(
            "0=tensormap:dtype=u32,dims=64x2,box=32x2,strides=24",
            "multiples of 16",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "0=tensormap:dtype=u32,dims=64x2,box=512x2",
            "box sizes must be between 1 and 256",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "0=tensormap:dtype=u32,dims=64x2x1x1x1x1,box=32x2x1x1x1x1",
            "rank 1 to 5, not 6",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_tensor_maps_tma_cannot_encode_are_refused(first: str, why: str) -> None:
    ran = shmem("trace", str(TMA), "-k", "tma_tile_16", "-b", "128", "-a", first, "-a", MAP)
    refused(ran, "error: --arg 0: ", why)


def test_a_parameter_block_of_junk_is_refused_at_its_tensor_map(tmp_path: Path) -> None:
    # 280 bytes from the first parameter on; the maps' 128 bytes decode as no tensor map
    junk = tmp_path / "params.bin"
    junk.write_bytes(bytes(range(256)) + bytes(24))
    ran = shmem("trace", str(TMA), "-k", "tma_tile_16", "-b", "128", "--params", f"@{junk}")
    refused(ran, "these 128 bytes are not a tiled CUtensorMap")


HOST = next((TEST_DATA / "triton" / "jit36" / "cache_abi7").glob("*/matmul_host_desc.json"))
GOOD = "tensordesc:shape=128x128,strides=128x1"


# a few of each kind in `make test` (a shape, a stride, a size, an option twice); the other
# spellings of a bad number are marked slow (each is a run of shmem: a second or more)
@pytest.mark.parametrize(
    ("desc", "why"),
    [
        ("shape=0x128,strides=128x1", "shape must be 1 to 5 numbers, each from 1 to 2,147,483,647"),
        pytest.param(
            "shape=-5x128,strides=128x1",
            "shape='-5x128' is not numbers joined by 'x'",
            marks=pytest.mark.slow,
        ),
        # Triton passes the shape as int32
        pytest.param(
            "shape=4294967296x1,strides=1x1", "each from 1 to 2,147,483,647", marks=pytest.mark.slow
        ),
        pytest.param(
            "shape=1_0x1,strides=1x1", "shape='1_0x1' is not numbers", marks=pytest.mark.slow
        ),  # int() takes it
        pytest.param(
            "shape=\uff11\uff12\uff18x128,strides=128x1",
            "is not numbers joined by 'x'",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "shape=1x1x1x1x1x1,strides=1x1x1x1x1x1",
            "shape must be 1 to 5 numbers",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "shape=128x128,strides=0x1",
            "strides must be 1 to 5 numbers, each from 1 to",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "shape=128x128,strides=128x2", "the last stride must be 1", marks=pytest.mark.slow
        ),
        # 3 float16 elements are 6 bytes: said in the descriptor's terms, not --arg 0's
        pytest.param(
            "shape=128x128,strides=3x1",
            "no TMA tensor map of float16 with shape=128x128, ",
            marks=pytest.mark.slow,
        ),
        ("shape=2147483647x2147483647,strides=4294967296x1", "the most is 64 GiB"),
        pytest.param(
            "shape=128x128,strides=128x1,padding=nan,padding=zero",
            "(each once)",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_hostile_host_side_descriptors(desc: str, why: str) -> None:
    ran = shmem(
        "trace", str(HOST.parent), "-g", "1,1", "-a", "k=128", "-a", f"a_desc=tensordesc:{desc}",
        "-a", f"b_desc={GOOD}", "-a", f"c_desc={GOOD}",
    )  # fmt: skip
    refused(ran, why)


def test_the_largest_grid_cuda_allows_is_answered_in_seconds() -> None:
    # past 2^22 blocks no class masks over the grid: the first block stands for every one
    ran = shmem("trace", str(CUBIN), "-k", "trivial", "-b", "32", "-g", "2147483647,65535,65535")
    assert ran.code == 0, ran.text[-2000:]
    assert "counted for each of the 9,223,090,559,730,712,575 blocks" in ran.text  # one traced
    assert ran.seconds < HANG_S and ran.peak_mib < 1024


def _spec(kernel: str, extra: str, source: str = "k.cubin") -> str:
    return (
        "block: [64]\narrays:\n  s: {dtype: int32, shape: [64]}\naccesses:\n"
        "  - {name: st, array: s, op: store, index: [tid % 64]}\n"
        f"kernel:\n  source: {source}\n  name: {kernel}\n{extra}\n"
    )


@pytest.mark.slow
def test_one_bad_kernel_spec_hides_none_of_the_others(tmp_path: Path) -> None:
    (tmp_path / "k.cubin").write_bytes(CUBIN2.read_bytes())
    bad_cluster = CUBIN2.read_bytes().replace(CLUSTER, CLUSTER[:4] + struct.pack("<III", 0, 1, 1))
    (tmp_path / "c.cubin").write_bytes(bad_cluster)
    specs = {
        "good": _spec("const_table", "  const: {table: [1, 2, 3]}"),
        "mapping": _spec("const_table", "  const: {table: {a: 1}}"),
        "unknown": _spec("const_table", "  const: {nope: 1}"),
        "outside": _spec("const_table", '  const: {table: "@../../../etc/passwd"}'),
        "cluster": _spec("clustered", "  grid: [4]", "c.cubin"),
        "spin": _spec("lock_spin", "  grid: [2]"),
    }
    for name, text in specs.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    ran = shmem("lint", str(tmp_path))
    assert ran.code == 2, ran.text[-3000:]  # the specs' errors
    assert "Traceback" not in ran.text
    assert ran.seconds < 60 and ran.peak_mib < 1024
    said = {
        "good": "the compiled kernel const_table has store STS",  # its result came
        "mapping": "kernel.const.table: expected an integer, a number, a string or a list",
        "unknown": "kernel.const nope: the kernel's cubin has no __constant__ variable",
        "outside": "is outside the kernel's source tree",
        "cluster": "the cubin's __cluster_dims__ of clustered (rebuild it)",
        "spin": "can never end",
    }
    for name, fragment in said.items():
        lines = [line for line in ran.text.splitlines() if line.startswith(f"{tmp_path}/{name}")]
        assert any(fragment in line for line in lines), (name, ran.text[-3000:])


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        # Params {int *out; int n; int stride; long long big[6];}: 64 bytes
        ((0, 100, 1), "global access at 0x0: not a device address (a null pointer"),
        ((1 << 63, 100, 1), "global access at 0x8000000000000000: not a device address"),
        pytest.param(  # a trip count of 2^31: stopped by the instruction budget (seconds)
            (0x7F0000000000, (1 << 31) - 1, 7),
            "ran 16,777,248 thread-instructions without ending",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_parameter_block_of_hostile_values(
    tmp_path: Path, fields: tuple[int, int, int], said: str
) -> None:
    block = tmp_path / "params.bin"
    block.write_bytes(struct.pack("<Qii", *fields) + bytes(48))
    ran = shmem(*_trace("params_struct", "-b", "32", "--params", f"@{block}"))
    refused(ran, "hostile2.cu:", said, seconds=90 if "without ending" in said else 30)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("size", "said"),
    [(63, "63 bytes; params_struct's parameter block is 64 bytes"), (1 << 31, "")],
)
def test_a_parameter_block_file_of_the_wrong_size(tmp_path: Path, size: int, said: str) -> None:
    block = tmp_path / "params.bin"
    with block.open("wb") as fh:  # sparse: refused from its size, never read whole
        fh.truncate(size)
    ran = shmem(*_trace("params_struct", "-b", "32", "--params", f"@{block}"))
    refused(ran, "--params", said)


# in `make test` a FIFO, a name and a count; the other files and values are marked slow
# (each is a run of shmem: a second or more)
@pytest.mark.parametrize(
    ("value", "said"),
    [
        pytest.param(
            "table=@/dev/zero",
            "it is a character device, not a regular file",
            marks=pytest.mark.slow,
        ),
        ("table=@FIFO", "it is a FIFO (named pipe), not a regular file"),
        pytest.param(
            "table=@SPARSE", "larger than the limit of 65536 bytes", marks=pytest.mark.slow
        ),
        pytest.param("table=@.", "it is a directory", marks=pytest.mark.slow),
        pytest.param("table=@", "'@' names no file", marks=pytest.mark.slow),
        pytest.param(
            "table=half:1e10", "1e10 does not fit in a 2-byte float", marks=pytest.mark.slow
        ),
        pytest.param(
            "table=int:99999999999", "99999999999 does not fit in 4 byte(s)", marks=pytest.mark.slow
        ),
        pytest.param("table=1_0", "'1_0' is not a number", marks=pytest.mark.slow),
        pytest.param("tab le=1", "--const expects NAME=VALUE", marks=pytest.mark.slow),
        ("nope=1", "the kernel's cubin has no __constant__ variable of that name (it has: table)"),
        pytest.param(
            "table=uint64_t:" + ",".join(["1"] * 33),
            "33 value(s) take 264 bytes; the variable",
            marks=pytest.mark.slow,
        ),
        ("table=" + "," * 70_000, "more than 65,536 values"),  # counted before each is read
    ],
)
def test_hostile_constant_values(tmp_path: Path, value: str, said: str) -> None:
    fifo, sparse = tmp_path / "fifo", tmp_path / "sparse.bin"
    os.mkfifo(fifo)
    with sparse.open("wb") as fh:
        fh.truncate(2 << 30)
    value = value.replace("@FIFO", f"@{fifo}").replace("@SPARSE", f"@{sparse}")
    ran = shmem(*_trace("const_table", "-b", "64", "--const", value))
    refused(ran, "error: --const", said)


@pytest.mark.slow
def test_the_largest_grid_of_differing_blocks_is_sampled_in_seconds() -> None:
    # const_table's shared address reads a __constant__ nobody set (inexact): no block
    # stands for another, so an even sample of the 2^63 blocks runs (a small budget: few)
    ran = shmem(
        *_trace("const_table", "-b", "64", "-g", "2147483647,65535,65535"),
        "--max-launch-instructions", "100000000",
    )  # fmt: skip
    assert ran.code == 0, ran.text[-2000:]
    said = " ".join(ran.text.split())  # the note is wrapped at the width of the terminal
    assert "of its 9,223,090,559,730,712,574 blocks after the first traced" in said
    assert ran.seconds < HANG_S and ran.peak_mib < 1024


def test_a_sample_of_a_huge_grid_stays_inside_it() -> None:
    # the float quotient of sample() rounded past the last of 2^63 blocks
    from shmem_cli.trace.emulator.grid import sample

    blocks = 9_223_090_559_730_712_574
    picked = sample(blocks, 8)
    assert picked[0] == 0 and picked[-1] == blocks - 1 and len(picked) == 8
    assert sample(100, 7) == (0, 16, 33, 50, 66, 82, 99)  # 16.5 and 82.5: half to even
