"""`--compare` finds a kernel in a real Nsight Compute export by the name Nsight writes
(tests/data/trace/templ: templ.cu's two instantiations measured on the H200, the source page
exported demangled and mangled)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.render.trace.compare import render_compare_text
from shmem_cli.trace.ncu.compare import InstructionCompare, KernelCompare
from shmem_cli.trace.ncu.names import bare, canonical, same_kernel
from shmem_cli.trace.ncu.ops import OpCompare

from .conftest import TEST_DATA

DATA = TEST_DATA / "trace" / "templ"
CUBIN = DATA / "templ.sm_90.cubin"


def test_nsights_spellings_of_one_kernel_are_one_name() -> None:
    ours = ("lab::transpose_tile<32, 0, float>", "_ZN3lab14transpose_tileILi32ELi0EfEEvPT1_PKS1_i")
    for written in (
        "void lab::transpose_tile<(int)32, (int)0, float>(T3 *, const T3 *, int)",
        "lab::transpose_tile<(int)32, (int)0, float>",
        "_ZN3lab14transpose_tileILi32ELi0EfEEvPT1_PKS1_i",
    ):
        assert same_kernel(written, ours), written
    assert not same_kernel(
        "void lab::transpose_tile<(int)32, (int)1, float>(T3 *, const T3 *, int)", ours
    )
    assert canonical(
        "void sgemmWarptiling<(int)128, (int)128, (unsigned int)4, (bool)1>(int, float *)"
    ) == ("sgemmWarptiling<128,128,4,true>")
    assert canonical("sgemmWarptiling<128, 128, 4u, true>") == "sgemmWarptiling<128,128,4,true>"
    assert canonical("softmax_rows") == "softmax_rows"


def _compare(csv: Path, kernel: str) -> tuple[int, str]:
    args = ["trace", str(CUBIN), "--kernel", kernel, "--block", "32,8", "-a", "n=32"]
    result = CliRunner().invoke(main, [*args, "--no-tables", "--compare", str(csv)])
    return result.exit_code, result.output


needs_nvdisasm = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


@needs_nvdisasm
@pytest.mark.parametrize("csv", ["ncu_source.csv", "ncu_source_mangled.csv"])
@pytest.mark.parametrize("pad", [0, 1])
def test_a_real_export_of_a_templated_kernel_agrees(csv: str, pad: int) -> None:
    code, out = _compare(DATA / csv, f"lab::transpose_tile<32, {pad}, float>")
    assert code == 0, out
    # the H200 measured 1,024 wavefronts for the unpadded column read, 32 with one pad
    assert (
        f"match    templ.cu:11  0x0240  LDS R9, [R6]          32  {1024 if pad == 0 else 32:>10,}"
        in out
    )


@needs_nvdisasm
def test_one_row_that_differs_fails(tmp_path: Path) -> None:
    text = (DATA / "ncu_source.csv").read_text()
    lines = text.splitlines(keepends=True)
    # the first table's LDS row (0x...240): its wavefronts 1024 become 1023
    k = next(i for i, line in enumerate(lines) if line.startswith('"0x') and "LDS R9, [R6]" in line)
    cells = lines[k].split('","')
    col = lines[1].split('","').index("L1 Wavefronts Shared")
    assert cells[col] == "1024"
    cells[col] = "1023"
    lines[k] = '","'.join(cells)
    changed = tmp_path / "ncu.csv"
    changed.write_text("".join(lines))
    code, out = _compare(changed, "lab::transpose_tile<32, 0, float>")
    assert code == 1
    assert "1,023 / 1,024" in out or "1023 / 1024" in out, out


def test_the_raw_pages_short_spelling_is_the_same_name() -> None:
    # Nsight Compute's raw page and launch list: no namespaces, no casts, bools as 0/1
    ours = ("lab::transpose_tile<32, 0, float>", "_ZN3lab14transpose_tileILi32ELi0EfEEvPT1_PKS1_i")
    assert same_kernel("void transpose_tile<32, 0, float>(T3 *, const T3 *, int)", ours)
    assert not same_kernel("void transpose_tile<32, 1, float>(T3 *, const T3 *, int)", ours)
    flash = (
        "flash::fwd<traits<64, false, cutlass::half_t, inner::cfg<4, cutlass::half_t> >, "
        "false, true>",
    )
    assert same_kernel("void fwd<traits<64, 0, half_t, cfg<4, half_t>>, 0, 1>(params)", flash)
    assert not same_kernel("void fwd<traits<64, 0, half_t, cfg<4, half_t>>, 1, 1>(params)", flash)
    # a name that keeps its namespaces is compared as written (no namespace dropped)
    assert not same_kernel("void other::transpose_tile<(int)32, (int)0, float>(int)", ours)
    assert bare("cutlass::device_kernel<(bool)1, cute::C<(int)2>>") == "device_kernel<1,C<2>>"


def test_enum_arguments_and_const_references_as_nsight_wrote_them() -> None:
    # the spellings of CuTe's Hopper tutorial kernels on the H200 (ncu 2025.3), shortened: a
    # wgmma atom's enumerator arguments (the raw page: the number alone) and a TMA atom's
    # const reference arguments (Nsight: const X &, c++filt: X const&)
    ours = (
        "gemm<cute::MMA_SS<(cute::GMMA::Major)1, (cute::GMMA::Major)0>, "
        "cute::Atom<cute::Layout<cute::C<64> > const&, cute::Swizzle<3, 4, 3> const&> >",
    )
    raw = "void gemm<MMA_SS<1, 0>, Atom<const Layout<C<64>> &, const Swizzle<3, 4, 3> &>>(T1)"
    source = (
        "void gemm<cute::MMA_SS<(cute::GMMA::Major)1, (cute::GMMA::Major)0>, "
        "cute::Atom<const cute::Layout<cute::C<(int)64>> &, const cute::Swizzle<(int)3, (int)4, "
        "(int)3> &>>(T1)"
    )
    assert same_kernel(raw, ours)
    assert same_kernel(source, ours)
    assert not same_kernel(raw.replace("MMA_SS<1, 0>", "MMA_SS<1, 1>"), ours)
    assert not same_kernel(source.replace("Major)0", "Major)1"), ours)
    # an empty parameter pack ending a template's arguments (CUTLASS's grouped GEMM epilogue):
    # Nsight writes `X<A, >`, c++filt `X<A>`
    assert same_kernel("void k<Epi<C<(int)128>, >, int>(T1)", ("k<Epi<cute::C<128> >, int>",))
    assert same_kernel("void k<Epi<C<128>, >, int>(T1)", ("k<Epi<cute::C<128> >, int>",))


@needs_nvdisasm
def test_kernel_takes_the_name_nsight_wrote() -> None:
    args = ["trace", str(CUBIN), "--block", "32,8", "-a", "n=32", "--no-tables", "-f", "json"]
    for written, pad in (
        ("void transpose_tile<32, 1, float>(T3 *, const T3 *, int)", 1),
        ("void lab::transpose_tile<(int)32, (int)0, float>(T3 *, const T3 *, int)", 0),
    ):
        result = CliRunner().invoke(main, [*args, "--kernel", written])
        assert result.exit_code == 0, result.output
        assert f"transpose_tile<32, {pad}, float>" in result.output


@pytest.mark.parametrize("page", ["source", "raw"])
def test_a_kernel_name_longer_than_any_line_keeps_its_verdict_and_table(page: str) -> None:
    """A CUTLASS kernel's demangled name runs to thousands of characters: the report wraps
    the heading and still says the verdict and every row (it printed the heading alone)."""
    name = "cutlass::device_kernel<" + ", ".join(f"cute::C<{n}>" for n in range(400)) + ">"
    row = InstructionCompare(0x40, "LDS.128 R8, [R8+0x38510]", None, None, (8, 12, 12),
                             (4, 8, 8), "launch")  # fmt: skip
    op = OpCompare("load requests", "smsp__sass_inst_executed_op_shared_ld", 144, 140)
    c = KernelCompare(
        "k.csv", name, 1, 2, (), (row,) if page == "source" else (),
        ops=(op,) if page == "raw" else (), page=page,
    )  # fmt: skip
    text = render_compare_text([c])
    assert "DISAGREE" in text
    # the name is cut as the trace's own header cuts it, not printed whole (2,400 characters
    # of a CUTLASS 3.x GEMM's before the verdict)
    assert "--compare k.csv: cutlass::device_kernel<...>" in text and "cute::C<399>" not in text
    if page == "source":
        assert "LDS.128 R8, [R8+0x38510]" in text and "8 / 4" in text
    else:
        assert "smsp__sass_inst_executed_op_shared_ld" in text and "144" in text
