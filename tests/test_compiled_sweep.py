"""``shmem sweep KERNEL.cu --define``: every variant compiled and traced, against what the
H200 measured for the same variants (tests/data/trace/fixes/measured.json)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.budget import DEFAULT, Budget
from shmem_cli.trace.fixes.compiled_sweep import (
    Define,
    check_size,
    parse_define,
    run_compiled_sweep,
)
from shmem_cli.trace.fixes.suggest_kernel import defines_of
from shmem_cli.trace.pipeline import TraceRequest

from .conftest import TRACE_DATA
from .test_trace_suggest import FIXES, SGEMM_ARGS, measured

needs_nvcc = pytest.mark.skipif(
    shutil.which("nvcc") is None or toolchain.which("nvdisasm") is None,
    reason="nvcc or nvdisasm not found",
)
SGEMM = FIXES / "kernels" / "warp_sgemm.cu"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home and cache home of the test's own: a sweep that wrote there (shmem's
    old default cache, ~/.cache/shmem/cubins) writes nothing in the real one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    return home


def sweep_json(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    result = CliRunner().invoke(main, ["sweep", *args, "--format", "json"])
    try:
        doc = json.loads(result.output)
    except json.JSONDecodeError:
        doc = None
    return result.exit_code, doc, result.output


@pytest.mark.slow  # five nvcc builds; docs/sweep.md's shown sweep of the kernel runs in make test
@needs_nvcc
def test_sweep_gives_every_variants_measured_counts_and_ranks_the_measured_best_first(
    tmp_path: Path,
) -> None:
    source = tmp_path / "warp_sgemm.cu"
    shutil.copy(SGEMM, source)
    code, doc, out = sweep_json(str(source), "--define", "PAD=0,1,2,4,8", "-b", "256", *SGEMM_ARGS)
    assert code == 0 and doc is not None, out
    truth = measured()
    assert [v["defines"] for v in doc["variants"]] == [{"PAD": str(p)} for p in (0, 1, 2, 4, 8)]
    for v in doc["variants"]:
        pad = v["defines"]["PAD"]
        totals = {
            op: (v["totals"][op]["requests"], v["totals"][op]["wavefronts"])
            for op in ("load", "store")
        }
        assert totals == truth[f"warp_sgemm_pad{pad}"]
        assert v["smem_bytes"] == 4 * 16 * (64 + int(pad)) + 4 * 16 * 128
    # the measured best: fewest wavefronts, then fewest bytes (PAD 2: 5,504)
    best = min(
        (0, 1, 2, 4, 8),
        key=lambda p: (sum(w for _, w in truth[f"warp_sgemm_pad{p}"].values()), p),
    )
    assert doc["best"]["defines"] == {"PAD": str(best)}
    notes = {v["defines"]["PAD"]: v["note"] for v in doc["variants"]}
    assert notes["0"] is None and notes["4"] is None and notes["8"] is None
    assert "LDS.128 x48 -> LDS.128 x44 + LDS.64 x8 + LDS x8" in notes["1"]
    assert "LDS.128 x40 + LDS.64 x16" in notes["2"]


@pytest.mark.slow  # 3-4 s; this file keeps its other sweeps fast
@needs_nvcc
def test_a_variant_that_fails_to_compile_is_listed_and_the_others_still_run(
    tmp_path: Path,
) -> None:
    source = tmp_path / "warp_sgemm.cu"
    shutil.copy(SGEMM, source)
    # PAD=-100: a negative array size, a compile error
    code, doc, out = sweep_json(str(source), "--define", "PAD=-100,4", "-b", "256", *SGEMM_ARGS)
    assert code == 0 and doc is not None, out
    bad, good = doc["variants"]
    assert bad["wavefronts"] is None and "nvcc failed" in bad["error"]["message"]
    assert good["error"] is None and doc["best"]["defines"] == {"PAD": "4"}
    text = CliRunner().invoke(
        main, ["sweep", str(source), "--define", "PAD=-100,4", "-b", "256", *SGEMM_ARGS]
    )
    assert text.exit_code == 0 and "failed: nvcc failed" in text.output


@needs_nvcc
@pytest.mark.slow  # three compiles and traces; the sweep of five variants above is fast
def test_variants_are_compiled_once_and_then_taken_from_the_named_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "warp_sgemm.cu"
    shutil.copy(SGEMM, source)
    calls: list[tuple[str, ...]] = []
    real = toolchain.compile_cu

    def counting(src: Path, arch: str, folder: Path, extra: Any = (), **kw: Any) -> Path:
        calls.append(tuple(extra))
        return real(src, arch, folder, extra, **kw)

    monkeypatch.setattr(toolchain, "compile_cu", counting)
    cache = str(tmp_path / "builds")
    request = TraceRequest(
        source, block=(256, 1, 1), args=("M=64", "N=128", "K=64"), build_cache=cache
    )
    first = run_compiled_sweep(request, [Define("PAD", (0, 4))])
    again = run_compiled_sweep(request, [Define("PAD", (0, 4))])
    assert sorted(calls) == [("-DPAD=0",), ("-DPAD=4",)]
    assert len(list((tmp_path / "builds").glob("*.json"))) == 2
    assert [v.totals.wavefronts for v in first.variants] == [
        v.totals.wavefronts for v in again.variants
    ]
    source.write_text(source.read_text() + "\n// changed\n")  # new source: compiled again
    run_compiled_sweep(request, [Define("PAD", (0,))])
    assert len(calls) == 3


def test_define_values_are_parsed_as_the_spec_sweep_parses_them() -> None:
    assert parse_define("PAD=0..4") == Define("PAD", (0, 1, 2, 3, 4))
    assert parse_define("PAD=0,1,2,4,8").values == (0, 1, 2, 4, 8)
    assert parse_define("T=16..64:16").values == (16, 32, 48, 64)
    for bad in ("PAD", "1PAD=0", "PAD=a", "PAD=$(id)", "P-AD=1"):
        with pytest.raises(ValueError):
            parse_define(bad)


def test_defines_of_reads_the_compile_arguments() -> None:
    assert defines_of(["-DPAD=4", "-D", "TILE=32", "-DFLAG", "-O3"]) == {
        "PAD": "4",
        "TILE": "32",
        "FLAG": "1",
    }


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--define", "PAD=0,1"], "--block"),
        (["-b", "256"], "--define"),
        (["--define", "PAD=x", "-b", "256"], "--define PAD=x"),
        (["--pad", "0..2", "-b", "256"], "--pad"),
    ],
)
def test_kernel_sweep_usage_errors(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(main, ["sweep", str(SGEMM), *args])
    assert result.exit_code == 2 and needle in result.output, result.output


def test_the_variants_are_counted_before_any_is_listed() -> None:
    # 256 --define of two values each are 2^256 (about 1.2 x 10^77) combinations: listing
    # them ran until memory ran out; now they are refused at once, before any compile
    defines = [a for k in range(256) for a in ("--define", f"D{k}=0,1")]
    result = CliRunner().invoke(main, ["sweep", str(SGEMM), "-b", "256", *defines])
    assert result.exit_code == 2, result.output
    assert "--define: the sweep has about 10^77 variants, each a compile" in result.output
    assert "the limit is 256: sweep fewer values at once" in result.output
    # 16 x 17 = 272: one past the limit of 256 (16 x 16) is said with each define's count
    quick = Budget.of(None, None, 60, 60)  # 256 x (60 + 60) s = 8.5 hours: under the day
    with pytest.raises(ShmemError) as err:
        check_size([Define("A", tuple(range(16))), Define("B", tuple(range(17)))], quick)
    assert "272 variants" in err.value.message and "16 (A) x 17 (B)" in err.value.message
    check_size([Define("A", tuple(range(16))), Define("B", tuple(range(16)))], quick)


def test_the_variants_time_at_their_limits_is_bounded_in_all() -> None:
    # at the default limits a variant may take 600 s to compile and 180 s to trace: 110
    # variants are 23.8 hours, 111 are 24.05, past the day a sweep may take in all
    axis = Define("PAD", tuple(range(111)))
    check_size([Define("PAD", tuple(range(110)))], DEFAULT)
    with pytest.raises(ShmemError) as err:
        check_size([axis], DEFAULT)
    assert err.value.message.startswith(
        "--define: the sweep's 111 variants may take 111 x (600 s to compile + 180 s to trace) "
        "= 24.1 hours at the limits each has (--compile-time-limit, --time-limit); the limit "
        "is 24 hours in all: lower them"
    )
    check_size([axis], Budget.of(None, None, 60, 60))  # the fix the message gives
    args = ["sweep", str(SGEMM), "-b", "256", "--define", "PAD=0..110"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "24.1 hours" in result.output, result.output


def test_define_on_a_spec_is_a_usage_error() -> None:
    spec = Path(__file__).parent.parent / "access_specs" / "transpose_naive.yaml"
    result = CliRunner().invoke(main, ["sweep", str(spec), "--define", "PAD=0,1"])
    assert result.exit_code == 2 and "--define" in result.output


def test_the_example_kernel_is_the_measured_one() -> None:
    # access_specs/kernels/warp_sgemm.cu ships with the examples; the H200 measured the copy
    # in tests/data/trace/fixes (its cubins' line tables name that file)
    shipped = Path(__file__).parent.parent / "access_specs" / "kernels" / "warp_sgemm.cu"
    assert shipped.read_text() == SGEMM.read_text()


def _grouped_source(tmp_path: Path) -> Path:
    """The grouped kernel (tests/data/trace/grouped) with its read's stride scaled by a
    macro, MUL: sa[(t * N * MUL) & 255]."""
    text = (TRACE_DATA / "grouped" / "grouped.cu").read_text()
    assert "sa[(t * p.N) & 255]" in text
    text = "#ifndef MUL\n#define MUL 1\n#endif\n" + text.replace(
        "sa[(t * p.N) & 255]", "sa[(t * p.N * MUL) & 255]"
    )
    source = tmp_path / "grouped.cu"
    source.write_text(text)
    return source


@pytest.mark.slow
@needs_nvcc
def test_a_sweep_replays_a_launch_from_its_parameter_block_and_device_memory(
    tmp_path: Path,
) -> None:
    """--params and --memory reach every variant: the grouped kernel's problems (N = 1, 2, 8
    over 5, 1, 3 tiles of 2 warps) read from device memory. The read of sa costs the most
    words of one bank: stride N * MUL words, 1, 2 and 8 wavefronts for MUL = 1; 2, 4 and 8
    for MUL = 2 (stride 16: 16 words, each read by two lanes, 8 in each of banks 0 and 16);
    sb[t ^ 1] one wavefront a warp-tile (18)."""
    data = TRACE_DATA / "grouped"
    code, doc, out = sweep_json(
        str(_grouped_source(tmp_path)), "--define", "MUL=1,2", "-b", "64", "-g", "4",
        "--params", f"@{data / 'params.bin'}",
        "--memory", f"0x7f1234000000=@{data / 'problems.bin'}",
    )  # fmt: skip
    assert code == 0 and doc is not None, out
    loads = {v["defines"]["MUL"]: v["totals"]["load"] for v in doc["variants"]}
    assert (loads["1"]["requests"], loads["1"]["wavefronts"]) == (36, 18 + 2 * (5 + 2 + 3 * 8))
    assert (loads["2"]["requests"], loads["2"]["wavefronts"]) == (36, 18 + 2 * (10 + 4 + 3 * 8))


def test_a_sweep_never_writes_over_a_file_it_reads(tmp_path: Path) -> None:
    given = tmp_path / "problems.bin"
    given.write_bytes(bytes(96))
    result = CliRunner().invoke(
        main,
        ["sweep", str(_grouped_source(tmp_path)), "--define", "MUL=1,2", "-b", "64",
         "--memory", f"0x7f1234000000=@{given}", "-o", str(given)],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert given.read_bytes() == bytes(96)


# the sm_90 build traps where the sm_90a one copies with TMA, as in test_trace_frontdoor.py
TRAPS = """
__global__ void k(float *o) {
  __shared__ __align__(16) float t[128];
  t[(threadIdx.x * MUL) % 128] = 1;
  __syncthreads();
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  if (threadIdx.x == 0) {
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(t));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 512;\\n"
                 "cp.async.bulk.commit_group;\\n"
                 "cp.async.bulk.wait_group 0;\\n" :: "l"(o), "r"(s) : "memory");
  }
#else
  __trap();
#endif
}
"""
CHOSE_A = (
    "compiled for sm_90a: the sm_90 build traps where the sm_90a one runs wgmma/TMA "
    "(give --arch sm_90 to trace the sm_90 build)"
)


@pytest.mark.slow
@needs_nvcc
def test_a_sweep_says_once_that_it_chose_sm90a_as_shmem_trace_says_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "k.cu"
    source.write_text(TRAPS)
    compiles: list[str] = []
    real = toolchain.compile_cu

    def counting(src: Path, arch: str, folder: Path, extra: Any = (), **kw: Any) -> Path:
        compiles.append(arch)
        return real(src, arch, folder, extra, **kw)

    monkeypatch.setattr(toolchain, "compile_cu", counting)
    cache = tmp_path / "builds"
    args = ["sweep", str(source), "--define", "MUL=1,2", "-b", "128", "--no-color"]
    args += ["--build-cache", str(cache)]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.output
    assert text.output.count("sm_90a") == 2, text.output  # one note, naming it twice
    assert f"note: {CHOSE_A}" in " ".join(text.output.split())
    assert sorted(compiles) == ["sm_90", "sm_90", "sm_90a", "sm_90a"]
    code, doc, out = sweep_json(*args[1:])  # from the cache now: the reason kept with the build
    assert code == 0 and doc is not None, out
    assert len(compiles) == 4
    assert doc["arch_note"] == CHOSE_A
    assert [v["note"] for v in doc["variants"]] == [None, None]
    assert [v["totals"]["store"]["requests"] for v in doc["variants"]] == [4, 4]  # no trap


@pytest.mark.slow  # 3-4 s; this file keeps its other sweeps fast
@needs_nvcc
def test_a_sweep_without_a_build_cache_writes_nothing_outside_its_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    """No --build-cache, no [tool.shmem] build-cache: each combination is built once (PAD=0
    given twice is swept once, one build), in a temporary folder removed at the end; nothing
    is written in the home (the old ~/.cache/shmem/cubins), the temporary folder, or beside
    the source, and a second sweep builds again (nothing was kept)."""
    source = tmp_path / "src" / "k.cu"
    source.parent.mkdir()
    source.write_text("__global__ void k(float *o) {\n  __shared__ float t[256];\n"
                      "  t[(threadIdx.x * (1 + PAD)) % 256] = 1;\n  __syncthreads();\n"
                      "  o[threadIdx.x] = t[threadIdx.x];\n}\n")  # fmt: skip
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    compiles: list[tuple[str, ...]] = []
    real = toolchain.compile_cu

    def counting(src: Path, arch: str, folder: Path, extra: Any = (), **kw: Any) -> Path:
        assert scratch in folder.parents  # the build goes to the sweep's temporary folder
        compiles.append(tuple(extra))
        return real(src, arch, folder, extra, **kw)

    monkeypatch.setattr(toolchain, "compile_cu", counting)
    for n in (1, 2):
        code, doc, out = sweep_json(str(source), "--define", "PAD=0,1,0", "-b", "32")
        assert code == 0 and doc is not None, out
        # PAD 0: 32 lanes in 32 banks, one wavefront; PAD 1: stride 2, two lanes a bank, two
        stores = [v["totals"]["store"]["wavefronts"] for v in doc["variants"]]
        assert stores == [1, 2]
        assert sorted(compiles) == sorted(n * [("-DPAD=0",), ("-DPAD=1",)])
    assert os.listdir(home) == [] and os.listdir(scratch) == []
    assert os.listdir(source.parent) == ["k.cu"]


#: READS=1: one read a thread at stride 2 (two lanes a bank: 2 wavefronts for an ideal 1);
#: READS=4: four reads a thread at stride 1 (4 wavefronts, all ideal). The stores (2,048
#: floats, one a lane a request) are the same in both.
WORK_KERNEL = r"""
#ifndef READS
#define READS 1
#endif
#define STRIDE (READS == 1 ? 2 : 1)
extern "C" __global__ void work(float* out) {
    __shared__ float s[2048];
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) s[i] = (float)i;
    __syncthreads();
    float acc = 0.f;
    for (int r = 0; r < READS; ++r) acc += s[threadIdx.x * STRIDE + 32 * r];
    out[threadIdx.x] = acc;
}
"""


@pytest.mark.slow  # two compiles
@needs_nvcc
def test_a_define_that_changes_the_work_is_said_and_can_be_ranked_per_ideal(
    tmp_path: Path,
) -> None:
    source = tmp_path / "work.cu"
    source.write_text(WORK_KERNEL)
    code, doc, out = sweep_json(str(source), "--define", "READS=1,4", "-b", "32")
    assert code == 0 and doc is not None, out
    one, four = doc["variants"]
    # by hand: 64 stores of 1 wavefront each in both; loads 1 request / 2 wavefronts and
    # 4 requests / 4 wavefronts
    assert one["totals"]["load"] == {"requests": 1, "wavefronts": 2, "ideal_wavefronts": 1}
    assert four["totals"]["load"] == {"requests": 4, "wavefronts": 4, "ideal_wavefronts": 4}
    assert one["bytes"] == {"load": 128, "store": 8192}
    assert four["bytes"] == {"load": 512, "store": 8192}
    assert (one["wavefronts"], four["wavefronts"]) == (66, 68)
    assert one["work_note"] is None
    assert four["work_note"] == "moves load 512 B (READS=1: 128 B)"
    # by wavefronts (the default) the one that does less work wins, and the text says why
    # that may mislead
    assert doc["rank"] == "wavefronts" and doc["same_work"] is False
    assert doc["best"]["defines"] == {"READS": "1"}
    text = CliRunner().invoke(main, ["sweep", str(source), "--define", "READS=1,4", "-b", "32"])
    assert text.exit_code == 0, text.output
    flat = " ".join(text.output.split())
    assert "a --define changed the work" in flat and "--rank per-ideal ranks them" in flat
    # per ideal wavefront READS=4 pays its ideal (68 / 68), READS=1 66 / 65
    code, doc, out = sweep_json(
        str(source), "--define", "READS=1,4", "-b", "32", "--rank", "per-ideal"
    )
    assert code == 0 and doc is not None, out
    assert doc["rank"] == "per-ideal" and doc["best"]["defines"] == {"READS": "4"}
    text = CliRunner().invoke(
        main, ["sweep", str(source), "--define", "READS=1,4", "-b", "32", "--rank", "per-ideal"]
    )
    flat = " ".join(text.output.split())
    assert "best = fewest wavefronts per ideal wavefront (--rank per-ideal)" in flat
    assert "best: READS=4: 68 wavefronts" in flat and "1.00 wavefronts per ideal one" in flat
