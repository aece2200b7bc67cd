"""The shmem trace command: arguments, exit statuses, error messages and outputs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvcc, needs_nvdisasm

COLUMN_CUBIN = str(DATA / "column_read.sm_90.cubin")
COLUMN_CU = str(DATA / "kernels" / "column_read.cu")
META = str(DATA / "meta.sm_90.cubin")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["trace", *args])


@needs_nvdisasm
def test_column_read_text_report() -> None:
    result = run(COLUMN_CUBIN, "--block", "32,32")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "column_read  sm_90, block 32x32x1, grid 1x1x1 (1 block run)" in lines[0]
    load = next(line for line in lines if " LDS " in f" {line} " and "load (4 B)" in line)
    # 32 warps, each reading a column of the 32x32 float tile: 32 wavefronts per request
    assert load.split()[0] == "32-way"
    assert "1,024" in load.split()
    assert "warp 0, occurrence=0: 32 wavefront(s), ideal 1, worst bank 32-way" in result.output


@needs_nvdisasm
def test_json_report_has_the_documented_keys() -> None:
    result = run(COLUMN_CUBIN, "-b", "32,32", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema_version"] == 1
    kernel = doc["files"][0]["kernels"][0]
    assert (kernel["name"], kernel["mangled"], kernel["arch"]) == (
        "column_read",
        "_Z11column_readPfPKf",
        "sm_90",
    )
    assert kernel["block"] == [32, 32, 1] and kernel["grid"] == [1, 1, 1]
    ops = {a["op"]: a for a in kernel["accesses"]}
    assert (ops["load"]["requests"], ops["load"]["wavefronts"], ops["load"]["max_ways"]) == (
        32,
        1024,
        32,
    )
    assert (ops["store"]["requests"], ops["store"]["wavefronts"]) == (32, 32)
    assert ops["load"]["file"].endswith("column_read.cu") and ops["load"]["line"] == 9
    assert ops["load"]["sass"].startswith("LDS ") and ops["load"]["bytes_per_lane"] == 4
    assert kernel["totals"]["load"]["wavefronts"] == 1024
    assert set(kernel["totals"]) == {
        "load",
        "store",
        "atomic",
        "ldmatrix",
        "stmatrix",
        "cp_async",
        "wgmma",
        "tma",
        "dsmem",
        "misc",
    }
    assert set(kernel["totals"]["misc"]) == {"requests", "wavefronts", "ideal_wavefronts"}
    assert kernel["totals"]["dsmem"] == {
        "requests": 0,
        "wavefronts": 0,
        "ideal_wavefronts": 0,
        "sectors": 0,
    }
    assert kernel["zero_filled_buffers"] == ["0 (out)", "1 (in)"]


@needs_nvdisasm
def test_grid_traces_every_block() -> None:
    result = run(COLUMN_CUBIN, "-b", "32,32", "--grid", "2", "-f", "json")
    assert result.exit_code == 0, result.output
    kernel = json.loads(result.output)["files"][0]["kernels"][0]
    assert kernel["blocks_traced"] == 2
    assert kernel["totals"]["load"] == {"requests": 64, "wavefronts": 2048, "ideal_wavefronts": 64}


@needs_nvdisasm
def test_list_params_of_a_struct_and_a_pointer() -> None:
    result = run(META, "--kernel", "by_value", "--list-params")
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines()[2:4]]
    assert rows[0][0] == "0" and rows[0][-2:] == ["0x0", "12"]
    assert rows[1][0] == "1" and rows[1][-2:] == ["0x10", "8"]


@needs_nvdisasm
def test_list_params_without_kernel_lists_every_kernel_of_the_file() -> None:
    # meta.cu holds four kernels: no --kernel lists each of them with its parameters
    result = run(META, "--list-params")
    assert result.exit_code == 0, result.output
    blocks = result.output.split("\n\n")
    assert blocks[0] == "4 kernels (trace one with --kernel NAME):"
    heads = sorted(b.splitlines()[0] for b in blocks[1:])
    assert heads == [
        "by_value",
        "no_shared  (_Z9no_sharedPfj)",
        "tiled_copy<16, double>  (_Z10tiled_copyILi16EdEvPT0_PKS0_if)",
        "tiled_copy<32, float>  (_Z10tiled_copyILi32EfEvPT0_PKS0_if)",
    ]
    double = next(b for b in blocks if b.startswith("tiled_copy<16, double>")).splitlines()
    # out, in (pointers), rows (int), scale (float): as declared in meta.cu
    assert [row.split()[:2] for row in double[2:6]] == [
        ["0", "out"],
        ["1", "in"],
        ["2", "rows"],
        ["3", "scale"],
    ]
    assert [row.split()[-2:] for row in double[2:6]] == [
        ["0x0", "8"],
        ["0x8", "8"],
        ["0x10", "4"],
        ["0x14", "4"],
    ]
    assert double[6].startswith("4 parameter(s), 24 bytes") and "2,176 B static shared" in double[6]


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_list_params_of_a_cu_file_compiles_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    compile_cu, disassemble = toolchain.compile_cu, toolchain.disassemble

    def counted_compile(*args: object, **kw: object) -> Path:
        calls.append("nvcc")
        return compile_cu(*args, **kw)  # type: ignore[arg-type]

    def counted_disassemble(*args: object, **kw: object) -> str:
        calls.append("nvdisasm")
        return disassemble(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(toolchain, "compile_cu", counted_compile)
    monkeypatch.setattr(toolchain, "disassemble", counted_disassemble)
    result = run(str(DATA / "kernels" / "meta.cu"), "--list-params")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("4 kernels")
    assert calls == ["nvcc", "nvdisasm"]


def test_list_params_of_a_kernel_whose_name_is_longer_than_a_screen() -> None:
    # a CuTe-style template name (~1,000 characters) is printed whole, the table after it
    result = run(str(DATA / "long_name.sm_90.cubin"), "--list-params")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("tagged_copy<Pair<Pair<") and len(lines[0]) > 1000
    assert lines[1].split() == ["position", "name", "type", "offset", "size"]
    assert lines[4].split() == ["2", "n", "int", "0x10", "4"]


def test_a_parameter_block_of_the_wrong_size_names_the_kernel_briefly(tmp_path: Path) -> None:
    # a library kernel's name runs to thousands of characters: the error cuts its templates
    wrong = tmp_path / "params.bin"
    wrong.write_bytes(bytes(5))
    result = run(str(DATA / "long_name.sm_90.cubin"), "-b", "32", "--params", f"@{wrong}")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "5 bytes; tagged_copy<Pair<...> >" in said and "'s parameter block is 20 bytes" in said
    assert len(result.output) < 600


@needs_nvdisasm
def test_svg_and_html_pictures(tmp_path: Path) -> None:
    svg, page = tmp_path / "t.svg", tmp_path / "t.html"
    result = run(COLUMN_CUBIN, "-b", "32,32", "--svg", str(svg), "--html", str(page))
    assert result.exit_code == 0, result.output
    assert svg.read_text().startswith("<svg") and "column_read" in svg.read_text()
    assert "<!DOCTYPE html>" in page.read_text() and "LDS" in page.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([COLUMN_CUBIN], "--block is required to trace"),
        (["nothere.cu", "-b", "32"], "no such file: nothere.cu"),
        ([COLUMN_CUBIN, "-b", "2048"], "--block 2048 is 2,048 in all; the most is 1,024"),
        ([COLUMN_CUBIN, "-b", "32", "--arch", "90"], "--arch expects sm_XX"),
        ([COLUMN_CUBIN, "-b", "32", "--arch", "sm_80"], "the cubin is for sm_90, not sm_80"),
        ([COLUMN_CUBIN, "-b", "32", "--nvcc-arg=-G"], "--nvcc-arg applies only to a .cu file"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


@needs_nvdisasm
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "nope"], "no kernel matches --kernel 'nope'; the cubin holds:\n  no_shared"),
        (["-k", "tiled"], "--kernel 'tiled' is ambiguous"),
        (["-k", "no_shared", "-a", "n=abc"], "--arg 1 (n): 'abc' is not a number"),
    ],
)
def test_kernel_and_argument_errors_name_the_file(args: list[str], message: str) -> None:
    result = run(META, "-b", "32", *args)
    assert result.exit_code == 2
    assert result.output.startswith(f"{META}: error: ")
    assert message in result.output


def test_not_a_kernel_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = run(str(notes), "-b", "32")
    assert result.exit_code == 2
    assert "neither CUDA source (.cu) nor a cubin" in result.output


def test_a_missing_disassembler_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(toolchain, "DEFAULT_CUDA_BIN", str(tmp_path / "none"))
    monkeypatch.setattr(toolchain, "wheel_bin_dirs", lambda: [])
    result = run(COLUMN_CUBIN, "-b", "32,32")
    assert result.exit_code == 2
    assert f"{COLUMN_CUBIN}: error: nvdisasm is needed" in result.output
    assert "pip install 'shmem[cuda]'" in result.output


def test_a_missing_compiler_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(toolchain, "DEFAULT_CUDA_BIN", str(tmp_path / "none"))
    result = run(COLUMN_CU, "-b", "32,32")
    assert result.exit_code == 2
    assert "nvcc is needed to compile" in result.output
    assert "install the CUDA toolkit" in result.output


@needs_nvdisasm
def test_an_instruction_the_emulator_lacks_is_a_located_error() -> None:
    # kernels/unsupported.cu: a texture fetch (TLD) at its line 6
    result = run(str(DATA / "unsupported.sm_90.cubin"), "-b", "32")
    assert result.exit_code == 2
    first = result.output.splitlines()[0]
    assert "unsupported.cu:6:1: error: instruction 'TLD.LZ " in first
    assert "Traceback" not in result.output


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_compiling_a_cu_file_with_nvcc_arguments(tmp_path: Path) -> None:
    src = tmp_path / "tile.cu"
    src.write_text(
        "__global__ void tile(float *out, int stride) {\n"
        "  __shared__ float t[32 * STRIDE];\n"
        "  t[threadIdx.x * STRIDE] = threadIdx.x;\n"
        "  __syncthreads();\n"
        "  out[threadIdx.x] = t[(31 - threadIdx.x) * STRIDE] + stride;\n"
        "}\n"
    )
    result = run(str(src), "-b", "32", "--nvcc-arg=-DSTRIDE=2", "-a", "stride=3", "-f", "json")
    assert result.exit_code == 0, result.output
    kernel = json.loads(result.output)["files"][0]["kernels"][0]
    # stride 2 floats: lanes n and n+16 share a bank, 2 wavefronts for the store and the load
    assert kernel["totals"]["store"] == {"requests": 1, "wavefronts": 2, "ideal_wavefronts": 1}
    assert kernel["totals"]["load"] == {"requests": 1, "wavefronts": 2, "ideal_wavefronts": 1}
    assert kernel["arguments"]["1 (stride)"] == "3"


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_a_cu_file_is_disassembled_once(tmp_path: Path, tool_runs: list[str]) -> None:
    # the listing that says whether the default build traps (then sm_90a) is the one traced
    src = tmp_path / "rows.cu"
    src.write_text(
        "__global__ void rows(float *out) {\n"
        "  __shared__ float t[32 * 32];\n"
        "  t[threadIdx.x * 32] = threadIdx.x;\n"
        "  __syncthreads();\n"
        "  out[threadIdx.x] = t[threadIdx.x];\n"
        "}\n"
    )
    result = run(str(src), "-b", "32", "-f", "json")
    assert result.exit_code == 0, result.output
    kernel = json.loads(result.output)["files"][0]["kernels"][0]
    assert kernel["totals"]["store"] == {"requests": 1, "wavefronts": 32, "ideal_wavefronts": 1}
    assert tool_runs.count("nvdisasm") == 1, tool_runs


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_an_executable_with_an_embedded_cubin(tmp_path: Path) -> None:
    if toolchain.which("cuobjdump") is None:
        pytest.skip("cuobjdump not found")
    app = tmp_path / "app.cu"
    app.write_text(
        f'#include "{Path(COLUMN_CU).resolve()}"\n'
        "int main() { column_read<<<1, dim3(32, 32)>>>(0, 0); return 0; }\n"
    )
    build = subprocess.run(
        ["nvcc", "-O3", "-arch=sm_90", "-lineinfo", "-o", str(tmp_path / "app"), str(app)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    result = run(str(tmp_path / "app"), "-b", "32,32", "-f", "json")
    assert result.exit_code == 0, result.output
    kernel = json.loads(result.output)["files"][0]["kernels"][0]
    assert kernel["name"] == "column_read"
    assert kernel["totals"]["load"] == {"requests": 32, "wavefronts": 1024, "ideal_wavefronts": 32}


def test_trace_is_listed_in_the_help() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert any(line.split()[:1] == ["trace"] for line in result.output.splitlines())


def test_a_moved_source_is_found_by_the_tail_of_its_path(tmp_path: Path) -> None:
    from shmem_cli.cuda.named_sources import locate_source

    kernels = tmp_path / "clone" / "tests" / "data" / "trace" / "kernels"
    kernels.mkdir(parents=True)
    (kernels / "basics.cu").write_text("__global__ void k(int n) {}\n")
    moved = "/elsewhere/checkout/tests/data/trace/kernels/basics.cu"
    assert locate_source(moved, [tmp_path / "clone"]) == kernels / "basics.cu"
    assert locate_source(moved, [kernels]) == kernels / "basics.cu"
    assert locate_source("/elsewhere/other.cu", [tmp_path]) is None


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_a_cubin_without_a_line_table_says_how_to_get_lines(tmp_path: Path) -> None:
    # the project's column_read built as a user's build may be, without -lineinfo: its rows
    # have no source line, and the report says why and what to add
    import subprocess

    from shmem_cli.cuda import toolchain

    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    cubin = tmp_path / "column_read.cubin"
    source = DATA / "kernels" / "column_read.cu"
    subprocess.run(
        [nvcc, "-cubin", "-O3", "-arch=sm_90", "-o", str(cubin), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    bare = run(str(cubin), "-b", "32,32", "--no-tables")
    assert bare.exit_code == 0, bare.output
    said = " ".join(bare.output.split())
    assert "note: no instruction has a source line (line ?): the cubin holds no line table;" in said
    assert "build it with nvcc -lineinfo" in said
    # nor are its parameter names known: an --arg by name says why
    named = run(str(cubin), "-b", "32,32", "--arg", "in=@" + str(cubin))
    assert named.exit_code == 2
    said = " ".join(named.output.split())
    assert "the sources a cubin's line table names, which needs nvcc -lineinfo)" in said
    # the kept cubin has its lines: no such note
    lined = run(COLUMN_CUBIN, "-b", "32,32", "--no-tables")
    assert lined.exit_code == 0 and "no line table" not in lined.output
