"""Device memory the host wrote before the launch, given at its real addresses (``--memory``,
issue 29): the project's own "grouped" kernel (tests/data/trace/grouped/grouped.cu) reads
each block's problem (sizes and operand pointers) from a device array, as grouped GEMMs do.

The expected figures are worked by hand from the kernel's source: block g < groups does
K / 256 tiles; per tile each of its 2 warps stores sa four times and sb once (conflict-free:
one wavefront each) and reads sa[(t * N) & 255] and sb[t ^ 1] once (sb: one wavefront). The
read of sa costs the most distinct words of one bank: N = 1 one wavefront (32 consecutive
words), N = 2 two (words 0, 2, ..., 62 in banks 0, 2, ..., 30, two words each), N = 8 eight
(words 0, 8, ..., 248 in banks 0, 8, 16, 24, eight words each).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.sass import Instruction
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.global_memory import GlobalMemory
from shmem_cli.trace.kernel import param_block
from shmem_cli.trace.kernel.param_block import read_memory

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "grouped" / "grouped.sm_90.cubin"
INS = Instruction(0x40, None, "LDG", ("E",), (), "k.cu", 7, "LDG.E R0, [R2.64]")

# addresses as cudaMalloc hands them out on an H200 (the real-run range, far above shmem's
# synthetic window at 0x800000000000)
PROBLEMS = 0x7F12_3400_0000
A = 0x7F12_3500_0000
B = 0x7F12_3600_0000
OUT = 0x7F12_3700_0000
# (M, N, K) per group: 5, 1 and 3 tiles
GROUPS = ((64, 1, 1280), (32, 2, 256), (64, 8, 768))


def _problems() -> bytes:
    """The problem array as the host program fwrites it: struct {int M, N, K, pad; const
    float *A, *B;}, 32 bytes each."""
    return b"".join(
        struct.pack("<iiiiQQ", m, n, k, 0, A + g * 0x10000, B + g * 0x10000)
        for g, (m, n, k) in enumerate(GROUPS)
    )


def _files(tmp_path: Path) -> dict[str, Path]:
    params = tmp_path / "params.bin"  # (problems, groups, out): 24 bytes
    params.write_bytes(struct.pack("<Qi4xQ", PROBLEMS, len(GROUPS), OUT))
    problems = tmp_path / "problems.bin"
    problems.write_bytes(_problems())
    return {"params": params, "problems": problems}


def _trace(*extra: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-b", "64", "-g", "4", *extra])
    return res.exit_code, res.output


# -- the emulator's global memory ---------------------------------------------------------


def test_preloaded_bytes_read_back_exact() -> None:
    m = GlobalMemory()
    m.preload(PROBLEMS + 8, b"\x05\x00\x00\x00\x07\x00\x00\x00", "--memory")
    off = m.offsets(np.array([PROBLEMS + 8, PROBLEMS + 12], dtype=np.int64), 4, INS)
    assert [int(m.data[o]) for o in off] == [5, 7]
    assert not np.any(m.untouched_taint(off, 4))  # written bytes: exact
    # the word before the range was never written: untouched device memory, flagged
    before = m.offsets(np.array([PROBLEMS + 4], dtype=np.int64), 4, INS)
    assert list(m.untouched_taint(before, 4)) == [2]
    assert m.written_bytes == 4096  # one page became real


def test_preload_refuses_the_launch_s_own_buffers() -> None:
    m = GlobalMemory()
    base = m.add_buffer(256, "in")
    with pytest.raises(ShmemError, match=r"--memory: .* overlaps the synthetic addresses"):
        m.preload(base + 16, bytes(4), "--memory")


# -- reading the option -------------------------------------------------------------------


def test_typed_values_and_files_are_read_in_address_order(tmp_path: Path) -> None:
    f = _files(tmp_path)["problems"]
    got = read_memory((f"{A:#x}=float:1.5,-2", f"{PROBLEMS:#x}=@{f}", f"{B}=uint64_t:0x10,1"))
    assert [r.address for r in got] == [PROBLEMS, A, B]
    assert got[0].data == _problems() and got[0].source == str(f)
    assert got[1].data == struct.pack("<ff", 1.5, -2.0)
    assert got[2].data == struct.pack("<QQ", 16, 1)
    assert got[0].end == PROBLEMS + 96


@pytest.mark.parametrize(
    ("texts", "said"),
    [
        (("0x7f1234000000=int:1,2,3", "0x7f1234000008=int:4"), "overlap; give each byte once"),
        (("0x100=int:1",), "0x100..0x104 is not device memory"),
        ((f"{(1 << 49) - 4:#x}=int:1,2",), "is not device memory"),
        (("banana=int:1",), "ADDR must be a device address"),
        (("\u0666\u0665\u0665\u0663\u0666=int:1",), "ADDR must be a device address"),  # 65536
        (("-0x10000=int:1",), "ADDR must be a device address"),
        (("0x7f1234000000",), "--memory expects ADDR=@FILE or ADDR=TYPE:v,v,..."),
        (("0x7f1234000000=quad:1",), "unknown element type 'quad'"),
    ],
)
def test_bad_ranges_are_refused(texts: tuple[str, ...], said: str) -> None:
    with pytest.raises(ShmemError, match=None) as caught:
        read_memory(texts)
    assert said in caught.value.message


def test_the_files_together_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the bound on all of a launch's files (128 MiB), made small so the test writes little
    monkeypatch.setattr(param_block, "MAX_FILE_BYTES", 100)
    f = tmp_path / "a.bin"
    f.write_bytes(bytes(64))
    with pytest.raises(ShmemError) as caught:
        read_memory((f"{PROBLEMS:#x}=@{f}", f"{A:#x}=@{f}"))
    assert "128 bytes in all; the most is" in caught.value.message
    with pytest.raises(ShmemError) as caught:  # --arg @FILE buffers count too
        read_memory((f"{PROBLEMS:#x}=@{f}",), used=40)
    assert "--memory 0x7f1234000000" in caught.value.message


def test_a_file_too_big_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with big.open("wb") as fh:  # sparse: 128 MiB and a byte, refused by its size
        fh.truncate((128 << 20) + 1)
    with pytest.raises(ShmemError) as caught:
        read_memory((f"{PROBLEMS:#x}=@{big}",))
    said = caught.value.message
    assert said.startswith(f"--memory 0x7f1234000000: {big}: the buffer file is larger than")


# -- the grouped kernel -------------------------------------------------------------------


@needs_nvdisasm
def test_without_memory_the_problems_read_as_untouched_zeros(tmp_path: Path) -> None:
    f = _files(tmp_path)
    code, out = _trace("--params", f"@{f['params']}", "--format", "json")
    assert code == 0, out
    k = json.loads(out)["files"][0]["kernels"][0]
    # K reads as 0: no tile, no shared-memory request at all
    assert k["totals"]["load"]["requests"] == 0 and k["totals"]["store"]["requests"] == 0
    # blocks 0..2 (block 3 >= groups returns) read (M, N) and K: 2 reads x 64 lanes each
    assert k["undescribed_memory"]["unwritten_reads"] == 3 * 64 * 2
    assert k["undescribed_memory"]["given"] == []


@needs_nvdisasm
def test_with_memory_the_counts_are_the_hand_worked_ones(tmp_path: Path) -> None:
    f = _files(tmp_path)
    operands = []  # A and B of each group, zeros, so that every byte read was given
    for g, (_, _, k) in enumerate(GROUPS):
        for base, size in ((A, 4 * k), (B, k)):
            path = tmp_path / f"{base:x}_{g}.bin"
            path.write_bytes(bytes(size))
            operands += ["--memory", f"{base + g * 0x10000:#x}=@{path}"]
    code, out = _trace(
        "--params",
        f"@{f['params']}",
        "--memory",
        f"0x7f12_3400_0000=@{f['problems']}",
        *operands,
        "--format",
        "json",
    )
    assert code == 0, out
    k = json.loads(out)["files"][0]["kernels"][0]
    tiles = sum(kk // 256 for _, _, kk in GROUPS)  # 9 tiles, 2 warps each: 18 warp-tiles
    assert k["totals"]["store"] == {
        "requests": 18 * 5,
        "wavefronts": 18 * 5,
        "ideal_wavefronts": 18 * 5,
    }
    by_line = {line["line"]: line for line in k["lines"]}
    assert (by_line[33]["requests"], by_line[33]["wavefronts"]) == (18 * 4, 18 * 4)
    assert (by_line[34]["requests"], by_line[34]["wavefronts"]) == (18, 18)
    # sb[t ^ 1]: one wavefront; sa: N = 1, 2, 8 over 5, 1, 3 tiles of 2 warps
    assert (by_line[36]["requests"], by_line[36]["wavefronts"]) == (
        36,
        18 + 2 * (5 * 1 + 1 * 2 + 3 * 8),
    )
    assert 2 * tiles == 18
    assert k["undescribed_memory"]["unwritten_reads"] == 0
    assert sum(a["inexact_requests"] for a in k["accesses"]) == 0
    given = k["undescribed_memory"]["given"]
    assert given[0] == {"address": "0x7f1234000000", "bytes": 96, "from": str(f["problems"])}
    assert len(given) == 7


@needs_nvdisasm
@pytest.mark.parametrize(
    ("option", "said"),
    # two in `make test`; the other two are read_memory's, tested above without a trace
    [
        ("0x7f1234000010=int:1", "--memory 0x7f1234000000 (96 B, to 0x7f1234000060) and --memory"),
        ("0x7f1234100000=@{missing}", "--memory 0x7f1234100000: cannot read {missing}: no such"),
        pytest.param(
            "0x8000=int:1",
            "--memory 0x8000: 0x8000..0x8004 is not device memory",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "0x7f1234100000=@{big}",
            "--memory 0x7f1234100000: {big}: the buffer file is larger than the limit of 128 MiB",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_bad_memory_is_a_usage_error_naming_it(tmp_path: Path, option: str, said: str) -> None:
    f = _files(tmp_path)
    big = tmp_path / "big.bin"
    with big.open("wb") as fh:  # sparse: refused by its size, never read
        fh.truncate((128 << 20) + 1)
    names = {"missing": str(tmp_path / "nope.bin"), "big": str(big)}
    code, out = _trace(
        "--params",
        f"@{f['params']}",
        "--memory",
        f"{PROBLEMS:#x}=@{f['problems']}",
        "--memory",
        option.format(**names),
    )
    assert code == 2, out
    assert said.format(**names) in " ".join(out.split())
    assert "Traceback" not in out
    os.unlink(big)


def test_a_spec_gives_memory_under_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shmem_cli.spec.compile import spec_from_mapping

    monkeypatch.chdir(tmp_path)  # a mapping's files are named from the folder it is read in
    (tmp_path / "problems.bin").write_bytes(bytes(64))  # a file the spec names must be there
    spec = spec_from_mapping(
        {
            "name": "grouped",
            "block": [64],
            "kernel": {
                "source": str(CUBIN),
                "memory": {PROBLEMS: "@problems.bin", "0x7f1235000000": "float:1,2"},
            },
            "arrays": {"sa": {"dtype": "float", "shape": [256]}},
            "accesses": [{"array": "sa", "index": ["threadIdx.x"], "op": "store"}],
        }
    )
    assert spec.kernel is not None
    given = dict(spec.kernel.memory)
    assert given["0x7f1235000000"] == "float:1,2"
    # YAML reads 0x7f1234000000 as a number: said in hex again, the file relative to the spec
    assert given["0x7f1234000000"].startswith("@") and given["0x7f1234000000"].endswith(
        "problems.bin"
    )


@pytest.mark.parametrize("key", ["-65536", "true", "~"])
def test_a_spec_s_memory_key_that_is_no_address_is_refused_at_it(tmp_path: Path, key: str) -> None:
    """YAML's keys that are not text (a negative number, a bool, null) escape the
    schema's pattern: refused where the key is, before any trace."""
    spec = tmp_path / "g.yaml"
    spec.write_text(
        "name: g\nblock: [64]\nkernel:\n  source: g.cubin\n"
        f"  memory: {{{key}: 'int:1'}}\n"
        "arrays: {sa: {dtype: float, shape: [256]}}\n"
        "accesses: [{array: sa, index: [threadIdx.x], op: store}]\n"
    )
    res = CliRunner().invoke(main, ["lint", str(spec)])
    assert res.exit_code == 2, res.output
    assert f"{spec}:5:12: error: kernel.memory: " in res.output
    assert "is not a device address" in res.output and "Traceback" not in res.output


def test_a_spec_s_memory_file_stays_in_the_source_tree(tmp_path: Path) -> None:
    from shmem_cli.lint.kernel_trace import KernelUnavailable, trace_spec_kernel
    from shmem_cli.spec.records import KernelDecl

    (tmp_path / "tree").mkdir()
    spec = tmp_path / "tree" / "g.yaml"
    kernel = KernelDecl(
        source="g.cubin",
        path=str(tmp_path / "tree" / "g.cubin"),
        name=None,
        grid=(1, 1, 1),
        args=(),
        nvcc=(),
        dynamic_smem=0,
        memory=(("0x7f1234000000", f"@{tmp_path / 'outside.bin'}"),),
        spec_path=str(spec),
    )
    got = trace_spec_kernel(kernel, (64, 1, 1), roots=(str(tmp_path / "tree"),))
    assert isinstance(got, KernelUnavailable) and got.error is not None  # SH100: refused
    assert got.reason.startswith(f"kernel.memory 0x7f1234000000: {str(tmp_path)[:30]}")
    assert "outside the kernel's source tree" in got.reason


@needs_nvdisasm
@pytest.mark.slow
def test_the_python_api_takes_memory_by_address() -> None:
    import shmem_cli

    r = shmem_cli.trace(
        CUBIN,
        block=64,
        grid=4,
        params=struct.pack("<Qi4xQ", PROBLEMS, len(GROUPS), OUT),
        memory={PROBLEMS: np.frombuffer(_problems(), dtype=np.uint8)},
    )
    assert r.kernel.launch.memory == ((PROBLEMS, 96, r.kernel.launch.memory[0][2]),)
    assert r.totals["store"].wavefronts == 90 and r.totals["load"].wavefronts == 80
    # A and B were not given: their reads (5 a thread per tile, 9 tiles) are flagged
    assert r.kernel.launch.undescribed_reads == 5 * 64 * 9


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("page", ["source.csv", "raw.csv"])
def test_a_real_runs_dumps_replay_to_the_h200s_counters(page: str) -> None:
    """The lab's host program on the H200 (tests/data/trace/grouped/h200): the parameter block
    and the device memory it cudaMalloc'd, dumped with their real addresses (memory.txt),
    replayed with --params and --memory: every shared instruction of Nsight Compute's source
    page and every per-op counter of its raw page agree (--compare exits 0)."""
    run = TRACE_DATA / "grouped" / "h200"
    options = []
    for line in (run / "memory.txt").read_text().splitlines():
        address, name, _ = line.split()
        options += ["--memory", f"{address}=@{run / name}"]
    code, out = _trace("--params", f"@{run / 'params.bin'}", *options, "--compare", str(run / page))
    assert code == 0, out
    assert "grouped_tiles: agree" in out  # --compare exits 1 where a row differs


def _spec_kernel(tmp_path: Path, **kernel: object) -> Any:
    """A spec in a source tree of its own holding the grouped cubin and its replay inputs."""
    import shutil

    from shmem_cli.spec.compile import spec_from_mapping

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").mkdir()  # the spec's repository: its source tree
    for name in ("grouped.sm_90.cubin", "params.bin", "problems.bin"):
        shutil.copy(TRACE_DATA / "grouped" / name, tree / name)
    doc = {
        "name": "grouped",
        "block": [64],
        "kernel": {"source": "grouped.sm_90.cubin", "grid": [4], **kernel},
        "arrays": {"sa": {"dtype": "float", "shape": [256]}},
        "accesses": [{"array": "sa", "index": ["threadIdx.x"], "op": "store"}],
    }
    spec = spec_from_mapping(doc, name=str(tree / "grouped.yaml"))
    assert spec.kernel is not None
    return spec.kernel


@needs_nvdisasm
def test_a_spec_replays_a_parameter_block_and_device_memory(tmp_path: Path) -> None:
    """kernel.params (the whole block, relative to the spec) with kernel.memory: the
    recipe's launch (docs/recipes.md section 5) traced from a spec, its hand-worked loads."""
    from shmem_cli.lint.kernel_trace import KernelUnavailable, trace_spec_kernel

    kernel = _spec_kernel(tmp_path, params="@params.bin", memory={PROBLEMS: "@problems.bin"})
    assert kernel.params == "@" + str(tmp_path / "tree" / "params.bin")
    kt = trace_spec_kernel(kernel, (64, 1, 1))
    assert not isinstance(kt, KernelUnavailable), kt
    totals = kt.to_json()["totals"]
    assert (totals["load"]["requests"], totals["load"]["wavefronts"]) == (36, 80)
    assert (totals["store"]["requests"], totals["store"]["wavefronts"]) == (90, 90)


def test_a_spec_s_params_file_stays_in_the_source_tree(tmp_path: Path) -> None:
    from shmem_cli.lint.kernel_trace import KernelUnavailable, trace_spec_kernel

    (tmp_path / "outside.bin").write_bytes(bytes(24))
    kernel = _spec_kernel(tmp_path, params="@../outside.bin")  # a mapping: the caller's own
    got = trace_spec_kernel(kernel, (64, 1, 1))
    assert isinstance(got, KernelUnavailable) and got.error is not None  # SH100: refused
    assert got.reason.startswith(f"kernel.params: {str(tmp_path)[:30]}")
    assert "outside the kernel's source tree" in got.reason


@needs_nvdisasm
def test_a_spec_s_cluster_reaches_the_launch(tmp_path: Path) -> None:
    from shmem_cli.lint.kernel_trace import KernelUnavailable, trace_spec_kernel

    kernel = _spec_kernel(tmp_path, cluster=[2])
    assert kernel.cluster == (2, 1, 1)
    kt = trace_spec_kernel(kernel, (64, 1, 1))
    assert not isinstance(kt, KernelUnavailable), kt
    assert kt.launch.cluster == (2, 1, 1) and kt.to_json()["cluster"] == [2, 1, 1]


@pytest.mark.parametrize(
    ("cluster", "said"),
    [
        ([3], "the grid's x (4) is not a multiple of the cluster's (3)"),
        ([4, 2, 4], "kernel.cluster 4,2,4 is 32 in all; the most is 16"),
    ],
)
def test_a_spec_s_cluster_is_checked_at_its_key(
    tmp_path: Path, cluster: list[int], said: str
) -> None:
    """A cluster the grid does not divide into, or of more than 16 CTAs: an error at
    kernel.cluster's line in the spec, before anything is traced."""
    with pytest.raises(ShmemError) as err:
        _spec_kernel(tmp_path, cluster=cluster)
    assert said in err.value.message
    assert err.value.pos is not None


@pytest.mark.parametrize(
    "key", [10**4000, -5, True, "0x7f1234000000"], ids=["4001-digits", "negative", "bool", "text"]
)
def test_the_python_api_s_memory_keys_are_64_bit_addresses(key: Any) -> None:
    """A key of 4,001 digits was said whole, in hex, in the range's error (10 KB)."""
    import shmem_cli

    with pytest.raises(ShmemError) as err:
        shmem_cli.trace(CUBIN, block=64, memory={key: b"1234"})
    assert "memory must be keys that are device addresses" in err.value.message
    assert len(err.value.message) < 200


@needs_nvdisasm
def test_a_launch_idle_for_parameters_left_at_zero_says_how_to_give_them() -> None:
    # groups not given: 0 groups, no block does any work, and the note says why
    base = [str(CUBIN), "--block", "64", "--grid", "4"]
    idle = CliRunner().invoke(main, ["trace", *base])
    assert idle.exit_code == 0, idle.output
    assert "no shared-memory instruction was executed" in idle.output
    assert "1 (groups) were not given and are 0, and no shared-memory instruction ran" in (
        " ".join(idle.output.split())
    )
    assert "--params @FILE (docs/recipes.md)" in " ".join(idle.output.split())
    # a kernel that works with its parameter at 0 (a histogram of n = 0 values still clears
    # its bins in shared memory) keeps the plain note
    hist = TRACE_DATA / "emu_basic_sm90.cubin"
    busy = CliRunner().invoke(
        main, ["trace", str(hist), "-k", "emu_histogram", "--block", "256", "--no-tables"]
    )
    assert busy.exit_code == 0, busy.output
    assert "note: parameter(s) 1 (n) were not given and are 0\n" in busy.output
    assert "no shared-memory instruction ran" not in busy.output


@needs_nvdisasm
def test_a_kernel_without_shared_memory_is_not_told_its_zeros_kept_it_idle() -> None:
    # meta.cu's no_shared has no shared-memory instruction and none declared: with n left at
    # 0 nothing shared ran, but no value of n would change that, so the note stays plain
    # (an llm.c adamw kernel was told to give its weight_decay with --params)
    meta = TRACE_DATA / "meta.sm_90.cubin"
    run = CliRunner().invoke(
        main, ["trace", str(meta), "-k", "no_shared", "--block", "32", "--no-tables"]
    )
    assert run.exit_code == 0, run.output
    assert "no shared-memory instruction was executed" in run.output
    assert "note: parameter(s) 1 (n) were not given and are 0\n" in run.output
    assert "--params" not in run.output


@needs_nvdisasm
def test_an_error_in_a_launch_names_the_parameters_left_at_zero() -> None:
    # a size or stride forgotten is a common cause of an address gone astray or a loop that
    # never ends: a launch's error names the parameters nobody gave (here n of the histogram)
    hist = TRACE_DATA / "emu_basic_sm90.cubin"
    base = ["trace", str(hist), "-k", "emu_histogram", "--block", "256", "--max-instructions", "1"]
    bare = CliRunner().invoke(main, base)
    assert bare.exit_code == 2, bare.output
    said = " ".join(bare.output.split())
    assert "raise --max-instructions (parameter(s) 1 (n) were not given and are 0: give" in said
    given = CliRunner().invoke(main, [*base, "--arg", "n=0"])
    assert given.exit_code == 2, given.output
    assert "were not given" not in given.output


@needs_nvdisasm
@pytest.mark.parametrize(
    ("args", "error", "noted"),
    [
        # bins at address 0: the error already says how to give a pointer's data
        (["--arg", "bins=0"], "not a device address (a null pointer, or a pointer", False),
        # bins made up at 16 bytes: the overrun already says --buffer-size and --arg bins=@FILE
        (["--buffer-size", "16"], "give the launch's real sizes with --buffer-size", False),
        # bins at address 1: the error gives no fix, so the note says how to give n
        (["--arg", "bins=1"], "misaligned 4-byte access at address 0x1", True),
    ],
    ids=["null-pointer", "overrun", "misaligned"],
)
def test_the_zero_parameter_note_only_where_the_error_says_no_fix(
    args: list[str], error: str, noted: bool
) -> None:
    hist = TRACE_DATA / "emu_basic_sm90.cubin"  # emu_histogram(data, n, bins): n not given
    ran = CliRunner().invoke(main, ["trace", str(hist), "-k", "emu_histogram", "-b", "256", *args])
    assert ran.exit_code == 2, ran.output
    said = " ".join(ran.output.split())
    assert error in said
    note = "(parameter(s) 1 (n) were not given and are 0: give the launch's values with --arg"
    assert (note in said) is noted
    assert said.count("--params @FILE") == (1 if "null" in error or noted else 0)


def test_name_defaults_adds_its_note_only_to_an_error_without_a_way_to_give_data() -> None:
    # the error says whether its text already gives the data (gives_data, set where the text
    # is made), not a match on the text: an error naming --arg without the flag is noted too
    from shmem_cli.trace.emulator.trace_error import TraceError
    from shmem_cli.trace.kernel.launch import name_defaults

    added = " (parameter(s) 1 (n), 2 (stride) were not given and are 0: give the launch's "
    added += "values with --arg NAME=VALUE, or its parameter block with --params @FILE)"
    for exc, noted in [
        (TraceError("loop ran too long: raise --max-instructions"), True),
        (TraceError("outside every buffer: give the data with --arg bins=@FILE"), True),
        (ShmemError("not a device address: --params @FILE"), True),
        (TraceError("outside every buffer: give it", gives_data=True), False),
        (TraceError("give smaller buffers (--buffer-size)", gives_data=True), False),
    ]:
        message = exc.message
        name_defaults(exc, ["1 (n)", "2 (stride)"])
        assert exc.message == message + (added if noted else ""), message
        assert str(exc.args[0]) == exc.message
    exc = TraceError("loop ran too long")
    name_defaults(exc, [])  # every parameter given: nothing to say
    assert exc.message == "loop ran too long"


def test_the_emulator_errors_that_say_how_to_give_data_carry_the_flag() -> None:
    # each error whose text names the option that gives the data says so in gives_data
    from shmem_cli.trace.emulator.arena.pages import _no_room
    from shmem_cli.trace.emulator.budget import SpinError
    from shmem_cli.trace.emulator.trace_error import TraceError

    assert _no_room(1 << 30, "out of memory").gives_data
    waits = SpinError("block (0,0,0) can never end")
    assert waits.gives_data and waits.message.endswith("(--arg NAME=@FILE)")
    other = SpinError("block (0,0,0) can never end", "trace its tile alone: --grid 1,1,4")
    assert not other.gives_data
    for made, said in [("bins", True), (None, False)]:  # an overrun of a made-up buffer
        m = GlobalMemory()
        at = m.add_buffer(16, "bins", made=made)
        with pytest.raises(TraceError) as caught:
            m.offsets(np.array([at + 16], dtype=np.int64), 4, INS)
        assert caught.value.gives_data is said, caught.value.message
        assert ("--arg bins=@FILE" in caught.value.message) is said
    with pytest.raises(TraceError) as caught:  # a null pointer
        GlobalMemory().offsets(np.array([0], dtype=np.int64), 4, INS)
    assert caught.value.gives_data


@needs_nvdisasm
def test_an_instruction_not_modelled_names_no_parameter_left_at_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no launch value makes the emulator model an instruction: the error says only that
    from shmem_cli.trace.emulator import execute
    from shmem_cli.trace.emulator.op_table import unsupported

    def refuse(function: Any) -> Any:
        raise unsupported(function.instructions[0])

    monkeypatch.setattr(execute, "decode_function", refuse)
    hist = TRACE_DATA / "emu_basic_sm90.cubin"
    ran = CliRunner().invoke(main, ["trace", str(hist), "-k", "emu_histogram", "-b", "256"])
    assert ran.exit_code == 2, ran.output
    assert "is not modelled by the emulator" in ran.output
    assert "were not given" not in ran.output
