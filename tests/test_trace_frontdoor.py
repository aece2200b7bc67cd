"""A ``.cu`` that uses a library traced as written: what the very compile read checked (computed
includes, include roots the user names), sm_90a chosen where the code needs it with ptxas's own
words, the architecture reported alike from a ``.cu`` and its cubin, and each row placed at the
user's own line with the library's line kept as detail."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.cuda.build import names_a_feature, read_files
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.pipeline import TraceRequest, load_kernel, trace_file, trace_loaded

from .conftest import needs_nvcc, needs_nvdisasm

KERNEL = """
__global__ void k(float *out) {
  __shared__ float s[256];
  s[threadIdx.x] = 1.f;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 2) % 256];
}
"""


def test_the_files_a_compile_read_come_from_its_line_markers(tmp_path: Path) -> None:
    (tmp_path / "k.cpp1.ii").write_bytes(
        b'# 1 "k.cu"\n# 1 "<built-in>"\n# 1 "<command-line>"\n'
        b'# 1 "/usr/include/stdio.h" 1 3 4\nint x;\n#line 7 "sub/a\\\\b.h"\n'
        b'# 12 "k.cu" 2\n  # not a marker\n'
    )
    assert read_files(tmp_path) == [
        str((tmp_path / "k.cu").resolve()),
        "/usr/include/stdio.h",
        str((tmp_path / "sub" / "a\\b.h").resolve()),
    ]


def _json(*args: str) -> dict[str, object]:
    res = CliRunner().invoke(main, ["trace", *args, "--format", "json", "--no-tables"])
    assert res.exit_code == 0, res.output
    kernel: dict[str, object] = json.loads(res.output)["files"][0]["kernels"][0]
    return kernel


def _project(tmp_path: Path, text: str) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".git").mkdir()  # the source tree is this repository
    (proj / "k.cu").write_text(text)
    return proj / "k.cu"


@needs_nvcc
def test_a_computed_include_inside_the_tree_compiles(tmp_path: Path) -> None:
    src = _project(tmp_path, "#define HDR(x) #x\n#include HDR(util.h)\n" + KERNEL)
    (src.parent / "util.h").write_text("#define TWO 2\n")
    k = _json(str(src), "-b", "128")
    assert [a["line"] for a in k["accesses"]] == [6, 8]  # the store and the load of KERNEL


@needs_nvcc
def test_a_computed_include_outside_the_tree_is_refused_after_the_compile(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "secret.h"
    secret.write_text("the secret words\n")
    src = _project(tmp_path, f"#define F <{secret}>\n#include F\n" + KERNEL)
    res = CliRunner().invoke(main, ["trace", str(src), "-b", "128"])
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    assert f"the build read {secret}" in flat and "outside the kernel's source tree" in flat
    assert "secret words" not in res.output


def _library(tmp_path: Path) -> tuple[Path, Path]:
    """A kernel in a project and a header library outside it, as CuTe's copy(...) is."""
    inc = tmp_path / "lib" / "include"
    inc.mkdir(parents=True)
    (inc / "mylib.h").write_text(
        "template <class T> __device__ __forceinline__ void put(T *s, int i, T v) {\n"
        "  s[i] = v;\n"
        "}\n"
    )
    src = _project(
        tmp_path,
        "#include <mylib.h>\n"
        "__global__ void k(float *out) {\n"
        "  __shared__ float s[1024];\n"
        "  put(s, threadIdx.x * 32 % 1024, 1.f);\n"
        "  __syncthreads();\n"
        "  out[threadIdx.x] = s[threadIdx.x];\n"
        "}\n",
    )
    return src, inc


@pytest.mark.slow
@needs_nvcc
def test_an_include_folder_typed_on_the_command_line_may_lie_outside_the_tree(
    tmp_path: Path,
) -> None:
    src, inc = _library(tmp_path)
    k = _json(str(src), "-b", "32", f"--nvcc-arg=-I{inc}")
    accesses = k["accesses"]
    assert isinstance(accesses, list)
    store = next(a for a in accesses if a["op"] == "store")
    # placed at the user's put(...) call, the library's line kept as detail
    assert (Path(store["file"]).name, store["line"]) == ("k.cu", 4)
    assert store["inner"] == {"file": str(inc / "mylib.h"), "line": 2}
    assert store["wavefronts"] == 32  # every lane in bank 0
    text = CliRunner().invoke(main, ["trace", str(src), "-b", "32", f"--nvcc-arg=-I{inc}"])
    assert "k.cu:4 < mylib.h:2" in text.output


@needs_nvcc
def test_the_loaded_kernel_carries_the_library_folders_its_build_took(tmp_path: Path) -> None:
    """Which lines are a library's is decided by the folders the build itself took (here
    spelled ``--include-path X``), carried on the loaded kernel: the trace reads them there,
    it does not parse the nvcc arguments again."""
    src, inc = _library(tmp_path)
    request = TraceRequest(
        src, block=(32, 1, 1), nvcc_args=("--include-path", str(inc)), nvcc_trusted=True
    )
    loaded = load_kernel(request, tmp_path / "build")
    assert [Path(p).resolve() for p in loaded.libraries] == [inc.resolve()]
    (kernel,) = trace_loaded(loaded, request).kernels
    store = next(a for a in kernel.accesses if a.op == "store")
    assert (Path(store.site.file or "").name, store.site.line) == ("k.cu", 4)
    assert store.site.inner == (str(inc / "mylib.h"), 2)


@pytest.mark.slow
@needs_nvcc
def test_a_spec_s_include_folder_stays_inside_the_tree(tmp_path: Path) -> None:
    src, inc = _library(tmp_path)
    request = TraceRequest(src, block=(32, 1, 1), nvcc_args=(f"-I{inc}",))
    with pytest.raises(ShmemError, match="outside the kernel's source tree"):
        trace_file(request)
    # an include root the project configures is allowed
    allowed = TraceRequest(
        src, block=(32, 1, 1), nvcc_args=(f"-I{inc}",), include_roots=(str(inc),)
    )
    (kernel,) = trace_file(allowed).kernels
    assert {a.op for a in kernel.accesses} == {"store", "load"}


@needs_nvcc
def test_a_header_in_an_include_root_not_given_with_i_names_the_option(tmp_path: Path) -> None:
    # [tool.shmem] include-roots says what a build may read; nvcc looks only where -I says
    src, inc = _library(tmp_path)
    with pytest.raises(ShmemError) as err:
        trace_file(TraceRequest(src, block=(32, 1, 1), include_roots=(str(inc),)))
    assert str(err.value).splitlines()[-1] == (
        f"hint: nvcc found no mylib.h, which the include root {inc.resolve()} holds: an include "
        f"root says what a build may read, -I where nvcc looks: add --nvcc-arg=-I{inc.resolve()}"
    )


WGMMA = """
__global__ void k(float *o) {
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
  o[threadIdx.x] = 1;
}
"""


@pytest.mark.slow
@needs_nvcc
def test_sm90a_is_chosen_when_ptxas_refuses_sm90(tmp_path: Path) -> None:
    src = _project(tmp_path, WGMMA)
    k = _json(str(src), "-b", "128")
    assert (k["arch"], k["target"]) == ("sm_90", "sm_90a")
    note = k["arch_note"]
    assert isinstance(note, str)
    assert "Instruction 'wgmma.fence' not supported on .target 'sm_90'" in note


# the sm_90 build traps where the sm_90a one copies with TMA (UBLKCP), as CuTe's builds do
TRAPS = """
__global__ void k(float *o) {
  __shared__ __align__(16) float t[128];
  t[threadIdx.x] = 1;
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


@pytest.mark.slow
@needs_nvcc
def test_sm90a_is_chosen_when_the_sm90_build_traps(tmp_path: Path, tool_runs: list[str]) -> None:
    k = _json(str(_project(tmp_path, TRAPS)), "-b", "128")
    assert (k["arch"], k["target"]) == ("sm_90", "sm_90a")
    assert k["arch_note"] == (
        "compiled for sm_90a: the sm_90 build traps where the sm_90a one runs wgmma/TMA "
        "(give --arch sm_90 to trace the sm_90 build)"
    )
    assert k["totals"]["store"]["requests"] == 4  # 128 threads' STS, no trap
    # each build disassembled once: the sm_90a listing that chose it is the one traced
    assert tool_runs.count("nvdisasm") == 2, tool_runs


# CUTLASS 3.x's kernels print an error and return where the sm_90a one copies with TMA
PRINTS = TRAPS.replace("__trap();", 'printf("needs sm_90a\\n");')


@pytest.mark.slow
@needs_nvcc
def test_sm90a_is_chosen_when_the_sm90_build_prints_an_error(
    tmp_path: Path, compiles: list[str]
) -> None:
    k = _json(str(_project(tmp_path, PRINTS)), "-b", "128")
    assert compiles == ["sm_90", "sm_90a"]
    assert (k["arch"], k["target"]) == ("sm_90", "sm_90a")
    assert k["arch_note"] == (
        "compiled for sm_90a: the sm_90 build prints an error where the sm_90a one runs "
        "wgmma/TMA (give --arch sm_90 to trace the sm_90 build)"
    )
    assert k["totals"]["store"]["requests"] == 4  # the 128 threads' STS, the bulk copy's build


@pytest.mark.parametrize(
    ("text", "differs"),
    [
        ("#ifdef __CUDA_ARCH_FEAT_SM90_ALL\n", True),
        ("#if __CUDA_ARCH_SPECIFIC__ == 900\n", True),
        ("#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__)\n", True),
        ("#if __CUDA_HAS_ARCH_SPECIFIC(90)\n", True),
        ("#define F(x) __CUDA_ARCH_FEAT_ ## x\n", True),  # any feature, pasted
        ("#if __CUDA_ARCH_HAS_FEATURE__(SM90_ALL)\n", True),
        ("NV_IF_TARGET(NV_HAS_FEATURE_SM_90a, (x();))\n", True),
        ("#ifdef __CUDA_ARCH_FEAT_SM100_ALL\n", False),  # defined by neither sm_90 build
        ("#if __CUDA_ARCH__ >= 900 // __CUDA_ARCH_FEAT_SM90\n", False),  # another name
        ("NV_IF_TARGET(NV_PROVIDES_SM_90, (x();))\n", False),
    ],
)
def test_the_macros_an_sm90a_build_defines_are_found_where_named(
    tmp_path: Path, text: str, differs: bool
) -> None:
    # nvcc 13: -arch=sm_90a adds __CUDA_ARCH_FEAT_SM90_ALL, __CUDA_ARCH_SPECIFIC__=900 and
    # __CUDA_ARCH_FAMILY_SPECIFIC__=900 to sm_90's (nvcc --dryrun, its device preprocessing)
    plain, header = tmp_path / "plain.h", tmp_path / "tests.h"
    plain.write_text("#define N 4\n")
    header.write_text(text)
    assert names_a_feature([str(plain)], "sm_90") is False
    assert names_a_feature([str(plain), str(header)], "sm_90") is differs


@pytest.mark.slow
@needs_nvcc
def test_a_printf_alone_keeps_sm90(tmp_path: Path, compiles: list[str]) -> None:
    # the sm_90a build could differ only where the source tests __CUDA_ARCH_FEAT_SM90_ALL (or
    # __CUDA_ARCH_SPECIFIC__, ...): a kernel that tests none is compiled once
    plain = PRINTS.replace("#ifdef __CUDA_ARCH_FEAT_SM90_ALL", "#if 0")  # printf in both builds
    k = _json(str(_project(tmp_path, plain)), "-b", "128")
    assert (k["target"], k["arch_note"]) == ("sm_90", None)
    assert compiles == ["sm_90"]


ASSERTS = """
#include <cassert>
#include <cstdio>
#include <cuda_fp16.h>
__global__ void k(float *o, int n) {
  __shared__ float s[128];
  assert(n <= 128);
  s[threadIdx.x] = __half2float(__float2half(1.f));
  __syncthreads();
  if (threadIdx.x == 0) printf("%f\\n", s[n - 1]);
  o[threadIdx.x] = s[threadIdx.x];
}
"""


@pytest.mark.slow
@needs_nvcc
def test_an_assert_and_a_printf_with_cuda_headers_compile_once(
    tmp_path: Path, compiles: list[str], tool_runs: list[str]
) -> None:
    # cuda_fp16.h reads nv/target, which defines NV_HAS_FEATURE_SM_90a from
    # __CUDA_ARCH_FEAT_SM90_ALL: the kernel names neither, so one build serves
    k = _json(str(_project(tmp_path, ASSERTS)), "-b", "128", "-a", "n=128")
    assert (k["target"], k["arch_note"]) == ("sm_90", None)
    assert compiles == ["sm_90"]
    assert tool_runs.count("nvdisasm") == 1, tool_runs
    assert k["totals"]["store"]["requests"] == 4


@pytest.mark.slow
@needs_nvcc
def test_a_printf_beside_a_bulk_copy_both_builds_run_keeps_sm90(
    tmp_path: Path, compiles: list[str]
) -> None:
    # cp.async.bulk is sm_90's (not only sm_90a's): with a debugging printf the sm_90a build
    # was chosen, saying "the sm_90 build prints an error where the sm_90a one runs TMA"; the
    # feature macro selects a store of the sm_90a text, so the sm_90a build is made and compared
    both = PRINTS.replace("#else", '  printf("copied\\n");\n#else').replace(
        "#ifdef __CUDA_ARCH_FEAT_SM90_ALL",
        "#ifdef __CUDA_ARCH_FEAT_SM90_ALL\n  o[1] = 2;\n#endif\n#if 1",
    )
    k = _json(str(_project(tmp_path, both)), "-b", "128")
    assert (k["target"], k["arch_note"]) == ("sm_90", None)
    assert compiles == ["sm_90", "sm_90a"]
    # a test of the macro that selects nothing leaves one text: one build
    named = both.replace("o[1] = 2;", "")
    compiles.clear()
    (tmp_path / "named").mkdir()
    k = _json(str(_project(tmp_path / "named", named)), "-b", "128")
    assert (k["target"], k["arch_note"], compiles) == ("sm_90", None, ["sm_90"])


@needs_nvcc
def test_ptxas_s_own_words_when_the_arch_is_given(tmp_path: Path) -> None:
    src = _project(tmp_path, WGMMA)
    res = CliRunner().invoke(main, ["trace", str(src), "-b", "128", "--arch", "sm_90"])
    assert res.exit_code == 2
    assert "ptxas error: Instruction 'wgmma.fence' not supported on .target 'sm_90'" in res.output
    assert "--arch sm_90a" in res.output


@pytest.mark.slow
@needs_nvcc
def test_the_architecture_is_reported_alike_from_a_cu_and_its_cubin(tmp_path: Path) -> None:
    src = _project(tmp_path, WGMMA)
    cubin = tmp_path / "k.cubin"
    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    subprocess.run(
        [nvcc, "-cubin", "-lineinfo", "-O3", "-arch=sm_90a", "-o", str(cubin), str(src)],
        check=True,
    )
    from_cu, from_cubin = _json(str(src), "-b", "128"), _json(str(cubin), "-b", "128")
    assert (from_cu["arch"], from_cu["target"]) == (from_cubin["arch"], from_cubin["target"])
    assert from_cubin["target"] == "sm_90a" and from_cubin["arch_note"] is None


ATOMICS = Path(__file__).parent / "data" / "trace" / "everyday" / "ev_atomics.sm_90.cubin"


@needs_nvdisasm
@pytest.mark.parametrize(("bins", "contended"), [(1, True), (64, False)])
def test_compare_and_swap_retries_are_flagged_as_contention(bins: int, contended: bool) -> None:
    # ev_fadd: atomicAdd(&bins[t % nb], float) is a CAS loop; with one bin 64 lanes contend
    k = _json(str(ATOMICS), "-k", "ev_fadd", "-b", "64", "-a", f"nb={bins}")
    accesses = k["accesses"]
    assert isinstance(accesses, list)
    (cas,) = [a for a in accesses if "CAST.SPIN" in a["sass"]]
    assert (cas["cas_retries"] > 0) is contended
    # the loop's read (LDS R2, [R5] before ATOMS.CAST.SPIN R3, [R5], R2, R3) runs again with
    # every retry: contended too, never "ok 100%"; the reads after the loop are not
    (read, after) = [a for a in accesses if a["sass"].startswith("LDS")]
    assert read["pc"] < cas["pc"] < after["pc"]
    flags = (read["contended"], cas["contended"], after["contended"])
    assert flags == (contended, contended, False)
    # the JSON's verdict is the text's first column: "contended" for the loop, whatever its
    # counts, so a script matching "ok" never passes it
    if contended:
        assert (read["verdict"], cas["verdict"]) == ("contended", "contended")
    assert "contended" not in (after["verdict"],) + ((read["verdict"],) * (not contended))
    assert read["cas_retries"] == 0
    text = (
        CliRunner()
        .invoke(main, ["trace", str(ATOMICS), "-k", "ev_fadd", "-b", "64", "-a", f"nb={bins}"])
        .output
    )
    assert ("contended" in text and "compare-and-swap attempt(s) failed" in text) is contended


HOPPER = Path(__file__).parent / "data" / "trace" / "hopper"


@needs_nvdisasm
def test_the_text_shows_the_decoded_wgmma_descriptors_and_tma_rows() -> None:
    gemm = [
        str(HOPPER / "ws_gemm.sm_90a.cubin"),
        "--block", "384", "--dynamic-smem", "197696", "--no-tables",
        "--arg", "0=tensormap:dtype=bf16,dims=256x128,box=64x128,swizzle=128B",
        "--arg", "1=tensormap:dtype=bf16,dims=256x128,box=64x128,swizzle=128B",
        "--arg", "2=tensormap:dtype=bf16,dims=128x128,box=128x128", "--arg", "3=4",
    ]  # fmt: skip
    res = CliRunner().invoke(main, ["trace", *gemm])
    assert res.exit_code == 0, res.output
    assert "wgmma descriptors and TMA copies, decoded:" in res.output
    assert "A K-major, 128B swizzle, start 0x400, LBO 16, SBO 1024" in res.output
    k = _json(*gemm)
    totals = k["totals"]
    assert isinstance(totals, dict)
    # 4 k-tiles of two TMA loads (A, B) and the epilogue's TMA store, from one producer warp
    assert totals["tma"] == {"requests": 9, "wavefronts": 0, "ideal_wavefronts": 0}


def test_include_roots_are_read_from_the_project_config(tmp_path: Path) -> None:
    from shmem_cli.lint.config import load_config

    (tmp_path / "lib").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.shmem]\ninclude-roots = ["lib"]\n')
    config = load_config(tmp_path / "pyproject.toml")
    assert config.include_roots == (str((tmp_path / "lib").resolve()),)


def _sweep_store_wavefronts(src: Path, inc: Path, cache: Path) -> dict[str, int]:
    res = CliRunner().invoke(
        main,
        ["sweep", str(src), "--define", "PAD=0,1", "-b", "32", f"--nvcc-arg=-I{inc}", "-f", "json",
         "--build-cache", str(cache)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    return {v["defines"]["PAD"]: v["totals"]["store"]["wavefronts"] for v in doc["variants"]}


@pytest.mark.slow  # four nvcc builds
@needs_nvcc
@needs_nvdisasm
def test_a_kernel_sweep_takes_an_include_folder_typed_outside_the_tree(tmp_path: Path) -> None:
    src, inc = _library(tmp_path)
    src.write_text(src.read_text().replace("threadIdx.x * 32", "threadIdx.x * (32 + PAD)"))
    cache = tmp_path / "builds"
    # PAD 0: every lane in bank 0 (32 wavefronts); PAD 1: 32 banks (1)
    assert _sweep_store_wavefronts(src, inc, cache) == {"0": 32, "1": 1}
    # a library header changed: the kept builds are not taken, the new code is traced
    (inc / "mylib.h").write_text(
        "template <class T> __device__ __forceinline__ void put(T *s, int i, T v) {\n"
        "  s[i % 32] = v;\n"
        "}\n"
    )
    assert _sweep_store_wavefronts(src, inc, cache) == {"0": 1, "1": 1}
