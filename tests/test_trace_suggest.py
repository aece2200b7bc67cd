"""``shmem trace --suggest`` against the H200: the project's padded kernels
(tests/data/trace/fixes), each PAD compiled and measured with Nsight Compute.

The suggestions are computed from the unpadded kernel's trace alone; the expected
numbers are what the H200 measured for the padded variants (measured.json), never
what the code under test produces."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.swizzle import Swizzle
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.fixes.arrays import array_of, parse_array_option, static_arrays
from shmem_cli.trace.fixes.relayout import Change, Piece, cost_moved, cover
from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import needs_nvcc, needs_nvdisasm

FIXES = Path(__file__).parent / "data" / "trace" / "fixes"
PADS = (1, 2, 4, 8)
SGEMM_ARGS = ("-a", "M=64", "-a", "N=128", "-a", "K=64")


def measured() -> dict[str, dict[str, tuple[int, int]]]:
    """Launch id -> {"load": (requests, wavefronts), "store": ...} as the H200 counted."""
    doc = json.loads((FIXES / "measured.json").read_text())
    out = {}
    for launch in doc["launches"]:
        per = launch["per_op"]
        out[launch["id"]] = {
            op: (per[key]["requests"], per[key]["wavefronts"])
            for op, key in (("load", "ld"), ("store", "st"))
        }
    return out


# kernel family: (block, args, array, row bytes)
CASES: dict[str, tuple[tuple[int, int, int], tuple[str, ...], str, int]] = {
    "warp_sgemm": ((256, 1, 1), ("M=64", "N=128", "K=64"), "As", 64 * 4),
    "row_quads": ((32, 8, 1), (), "tile", 128 * 4),
}


def cubin(family: str, pad: int) -> Path:
    """The cubin holding variant ``pad`` (row_quads: one cubin, one instance per pad)."""
    name = f"warp_sgemm.pad{pad}" if family == "warp_sgemm" else "row_quads"
    return FIXES / f"{name}.sm_90.cubin"


def kernel_name(family: str, pad: int) -> str | None:
    return f"row_quads<{pad}>" if family == "row_quads" else None


@functools.cache
def traced(family: str, pad: int) -> KernelTrace:
    block, args, _, _ = CASES[family]
    request = TraceRequest(
        cubin(family, pad), kernel=kernel_name(family, pad), block=block, args=args
    )
    return trace_file(request).kernels[0]


def op_counts(kernel: KernelTrace) -> dict[str, tuple[int, int]]:
    return {op: (kernel.totals[op].requests, kernel.totals[op].wavefronts) for op in kernel.totals}


@needs_nvdisasm
@pytest.mark.parametrize("family", sorted(CASES))
# the unpadded and one padded build in `make test`, the other pads slow (each is predicted
# from the unpadded trace by test_a_pad_applied_to_the_unpadded_trace_predicts_...)
@pytest.mark.parametrize(
    "pad", (0, 2, *(pytest.param(p, marks=pytest.mark.slow) for p in PADS if p != 2))
)
def test_each_padded_variant_traces_as_measured(family: str, pad: int) -> None:
    """The compiled variants themselves: per op and per SASS instruction as Nsight Compute."""
    got = op_counts(traced(family, pad))
    want = measured()[f"{family}_pad{pad}"]
    assert {op: got[op] for op in want} == want
    doc = json.loads((FIXES / "measured.json").read_text())
    insts = next(x for x in doc["launches"] if x["id"] == f"{family}_pad{pad}")["instructions"]
    by_pc = {a.pc: a for a in traced(family, pad).accesses}
    for ins in insts:
        a = by_pc[ins["pc"]]
        assert (a.result.requests + a.predicated_off, a.result.wavefronts) == (
            ins["executed"],
            ins["wavefronts"],
        ), ins["sass"]


@needs_nvdisasm
@pytest.mark.parametrize("family", sorted(CASES))
@pytest.mark.parametrize("pad", PADS)
def test_a_pad_applied_to_the_unpadded_trace_predicts_the_measured_variant(
    family: str, pad: int
) -> None:
    """Row padding applied to the PAD=0 trace, vector accesses split where the pad
    misaligns them, gives what the H200 measured for the kernel compiled with that pad."""
    _, _, array_name, pitch = CASES[family]
    path = cubin(family, 0)
    kernel = find_kernel(read_cubin(path), kernel_name(family, 0))
    arrays = static_arrays(path, kernel)
    change = Change("pad", pitch=pitch, pad_bytes=4 * pad)
    totals: dict[str, list[int]] = {}
    for rec in traced(family, 0).records:
        array = array_of(rec, arrays)
        if array is not None and array.name == array_name:
            new = cost_moved(rec, array, change, SM90)
            r, w = new.requests, new.wavefronts
        else:
            r, w = rec.n, int(rec.stats(SM90).wavefronts.sum())
        t = totals.setdefault(rec.kind.op, [0, 0])
        t[0] += r
        t[1] += w
    want = measured()[f"{family}_pad{pad}"]
    assert {op: tuple(v) for op, v in totals.items()} == want


def test_static_arrays_are_placed_in_declaration_order() -> None:
    cubin = FIXES / "warp_sgemm.pad1.sm_90.cubin"
    kernel = read_cubin(cubin).kernels[0]
    arrays = static_arrays(cubin, kernel)
    # As[16][65] floats then Bs[16][128], after the 1 KiB the driver reserves
    assert [(a.name, a.offset, a.size) for a in arrays] == [
        ("As", 1024, 16 * 65 * 4),
        ("Bs", 1024 + 16 * 65 * 4, 16 * 128 * 4),
    ]


def test_the_cover_of_a_misaligned_vector_is_what_ptxas_emitted() -> None:
    """warp_sgemm PAD=1 (tests/data/trace/fixes/README.md): rows 4 bytes past a 16-byte
    boundary read as LDS.128 from the boundary + LDS; 8 past, LDS.64 + LDS.64; 12 past,
    LDS + LDS.128. Stores never write bytes they were not given."""
    assert cover(4, 16, exact=False) == (Piece(-4, 16), Piece(12, 4))
    assert cover(8, 16, exact=False) == (Piece(0, 8), Piece(8, 8))
    assert cover(12, 16, exact=False) == (Piece(0, 4), Piece(4, 16))
    assert cover(4, 16, exact=True) == (Piece(0, 4), Piece(4, 8), Piece(12, 4))
    assert cover(4, 8, exact=False) == (Piece(0, 4), Piece(4, 4))


@needs_nvdisasm
def test_a_swizzle_finer_than_the_vector_splits_it() -> None:
    cubin = FIXES / "row_quads.sm_90.cubin"
    kernel = find_kernel(read_cubin(cubin), "row_quads<0>")
    (tile,) = static_arrays(cubin, kernel)
    fine = Change("swizzle", swizzle=Swizzle.cute(3, 2, 7))  # XORs bits 2..4: inside an LDS.64
    coarse = Change("swizzle", swizzle=Swizzle.cute(3, 3, 7))  # bits 3..5: 8-byte pieces kept
    loads = [r for r in traced("row_quads", 0).records if r.kind.op == "load"]
    assert loads and all(r.kind.size == 8 for r in loads)
    for rec in loads:
        split, kept = cost_moved(rec, tile, fine, SM90), cost_moved(rec, tile, coarse, SM90)
        assert split.split and split.pieces == (4, 4) and split.requests == 2 * rec.n
        assert not kept.split and kept.requests == rec.n


def run_suggest(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["trace", *args, "--suggest", "--format", "json"])
    assert result.exit_code == 0, result.output
    kernel: dict[str, Any] = json.loads(result.output)["files"][0]["kernels"][0]
    return kernel


SUGGESTION_KEYS = {"array", "kind", "extra_bytes", "breaks_vector_alignment", "predicted"}


@pytest.mark.slow
@needs_nvdisasm
def test_suggest_on_the_unpadded_sgemm_lists_the_aligned_pad_and_marks_the_misaligning_ones() -> (
    None
):
    kernel = run_suggest(str(FIXES / "warp_sgemm.pad0.sm_90.cubin"), "-b", "256", *SGEMM_ARGS)
    got = kernel["suggestions"]
    assert got and all(set(s) >= SUGGESTION_KEYS for s in got)
    pads = {s["pad_bytes"]: s for s in got if s["kind"] == "pad"}
    truth = measured()
    for pad in (1, 2, 4):  # the aligned pad (4) and the misaligning ones below it
        s = pads[4 * pad]
        assert s["array"] == "As" and s["extra_bytes"] == 16 * 4 * pad
        assert s["breaks_vector_alignment"] is (pad != 4)
        predicted = {op: (v["requests"], v["wavefronts"]) for op, v in s["predicted"].items()}
        assert {op: predicted[op] for op in ("load", "store")} == truth[f"warp_sgemm_pad{pad}"]
        assert "PAD 0 -> " + str(pad) in s["fix"] and "As[16][64 + " + str(pad) + "]" in s["fix"]
        assert "--define PAD=" in s["sweep"]
    ranked = [(s["wavefronts"], s["extra_bytes"]) for s in got]
    assert ranked == sorted(ranked)
    for s in got:
        if s["kind"] == "swizzle":
            assert set(s["swizzle"]) == {"bits", "base", "shift"} and "pad_bytes" not in s


@pytest.mark.slow
@needs_nvdisasm
def test_suggestions_for_a_grid_count_every_block_as_the_trace_does() -> None:
    # two blocks alike: the trace counts the one traced twice, and so must every suggestion
    # (its counts were the traced block's beside the grid's "as traced")
    kernel = run_suggest(
        str(FIXES / "warp_sgemm.pad0.sm_90.cubin"), "-b", "256", "-g", "2", *SGEMM_ARGS
    )
    truth = measured()
    pads = {s["pad_bytes"]: s for s in kernel["suggestions"] if s["kind"] == "pad"}
    for pad in (1, 2, 4):
        predicted = pads[4 * pad]["predicted"]
        got = {
            op: (predicted[op]["requests"], predicted[op]["wavefronts"])
            for op in truth[f"warp_sgemm_pad{pad}"]
        }
        assert got == {op: (2 * r, 2 * w) for op, (r, w) in truth[f"warp_sgemm_pad{pad}"].items()}
        for ins in pads[4 * pad]["instructions"]:
            assert ins["requests"] % 2 == 0 and ins["new_requests"] % 2 == 0


@pytest.mark.slow
@needs_nvdisasm
def test_the_suggested_swizzle_is_what_the_kernel_compiled_with_it_traces() -> None:
    """warp_sgemm_xor.cu is warp_sgemm with the XOR --suggest proposes written into the
    source as its words say (on each vector's first element): traced, it gives the
    predicted counts, and the H200 measured them (its stores at the ideal 384 wavefronts,
    where the unpadded kernel's cost 768); with the XOR on every element's index (XOR_EACH)
    ptxas reads As with scalar LDS, which is why the words say where to apply it."""
    kernel = run_suggest(str(FIXES / "warp_sgemm.pad0.sm_90.cubin"), "-b", "256", *SGEMM_ARGS)
    (swz,) = [
        s
        for s in kernel["suggestions"]
        if s["kind"] == "swizzle" and s["swizzle"] == {"bits": 2, "base": 5, "shift": 5}
    ]
    assert "i ^ ((i >> 5) & 0x18)" in swz["fix"] and "first element" in swz["fix"]
    assert swz["breaks_vector_alignment"] is False and swz["extra_bytes"] == 0
    block = (256, 1, 1)
    args = ("M=64", "N=128", "K=64")
    compiled = trace_file(
        TraceRequest(FIXES / "warp_sgemm_xor.sm_90.cubin", block=block, args=args)
    ).kernels[0]
    predicted = {op: (v["requests"], v["wavefronts"]) for op, v in swz["predicted"].items()}
    assert {op: predicted[op] for op in ("load", "store")} == {
        op: op_counts(compiled)[op] for op in ("load", "store")
    }
    truth = measured()
    assert {op: predicted[op] for op in ("load", "store")} == truth["warp_sgemm_xor"]
    assert truth["warp_sgemm_xor"]["store"][1] < truth["warp_sgemm_pad0"]["store"][1]
    each = trace_file(
        TraceRequest(FIXES / "warp_sgemm_xor_each.sm_90.cubin", block=block, args=args)
    ).kernels[0]
    assert {a.opcode for a in each.accesses if a.op == "load"} == {"LDS", "LDS.128"}
    assert each.totals["load"].requests == 2 * compiled.totals["load"].requests
    assert {op: op_counts(each)[op] for op in ("load", "store")} == truth["warp_sgemm_xor_each"]


@pytest.mark.slow
@needs_nvdisasm
def test_suggest_names_the_template_parameter_and_puts_the_measured_best_first() -> None:
    kernel = run_suggest(str(FIXES / "row_quads.sm_90.cubin"), "-k", "row_quads<0>", "-b", "32,8")
    got = kernel["suggestions"]
    truth = measured()
    pads = [s for s in got if s["kind"] == "pad"]
    best = min(PADS, key=lambda p: (sum(w for _, w in truth[f"row_quads_pad{p}"].values()), p))
    assert pads[0]["pad_bytes"] == 4 * best == 8  # measured: 512 wavefronts at PAD 2
    for s in pads:
        pad = s["pad_bytes"] // 4
        if pad in PADS:
            predicted = {op: (v["requests"], v["wavefronts"]) for op, v in s["predicted"].items()}
            assert {op: predicted[op] for op in ("load", "store")} == truth[f"row_quads_pad{pad}"]
    one = next(s for s in pads if s["pad_bytes"] == 4)
    assert one["breaks_vector_alignment"] is True  # LDS.64 -> LDS + LDS in a rolled loop
    assert "template parameter PAD" in pads[0]["sweep"]


@pytest.mark.slow
@needs_nvdisasm
def test_suggest_text_says_the_fix_in_the_kernels_terms() -> None:
    result = CliRunner().invoke(
        main,
        ["trace", str(FIXES / "warp_sgemm.pad0.sm_90.cubin"), "-b", "256", *SGEMM_ARGS,
         "--suggest", "--no-tables"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.output
    assert "layout suggestions for As" in out
    assert "__shared__ float As[16][64 + 4] (PAD 0 -> 4)" in out
    assert "split (misaligned)" in out and "LDS.128 + LDS" in out


def test_array_option_errors() -> None:
    assert parse_array_option("As=0:8192") == ("As", 0, 8192)
    assert parse_array_option("Bs=0x2000:0x1000") == ("Bs", 8192, 4096)
    for bad in ("As", "As=1", "As=0:0", "1x=0:4", "As=0:4:5"):
        with pytest.raises(ShmemError):
            parse_array_option(bad)


def test_array_needs_suggest_and_a_well_formed_value() -> None:
    cubin = str(FIXES / "warp_sgemm.pad0.sm_90.cubin")
    result = CliRunner().invoke(main, ["trace", cubin, "-b", "256", "--array", "As=0:64"])
    assert result.exit_code == 2 and "--suggest" in result.output


@needs_nvdisasm
def test_dynamic_parts_must_lie_inside_dynamic_shared_memory() -> None:
    cubin = str(FIXES / "warp_sgemm.pad0.sm_90.cubin")
    result = CliRunner().invoke(
        main,
        ["trace", cubin, "-b", "256", *SGEMM_ARGS, "--suggest", "--array", "X=0:64"],
    )
    assert result.exit_code == 2
    assert "--dynamic-smem" in result.output and "Traceback" not in result.output


@needs_nvdisasm
def test_a_triton_entrys_dynamic_shared_memory_is_its_metadatas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--suggest on a Triton entry looks at the dynamic shared memory the launch has (the
    metadata's "shared"): it took --dynamic-smem's default 0, so no array held the
    instructions and a conflicting entry read "no shared array has an instruction with bank
    conflicts"."""
    from shmem_cli.trace.fixes import suggest_kernel

    jit = Path(__file__).parent / "data" / "triton" / "jit36" / "cache_abi7"
    meta = next(jit.glob("*/transpose_tiles.json"))
    seen: list[int] = []
    real = suggest_kernel.kernel_arrays

    def spy(static: Any, kernel: Any, dynamic: int, named: Any) -> Any:
        seen.append(dynamic)
        return real(static, kernel, dynamic, named)

    monkeypatch.setattr(suggest_kernel, "kernel_arrays", spy)
    request = TraceRequest(meta.parent, grid=(2, 2, 1), args=("n_rows=128", "n_cols=128"))
    suggest_kernel.trace_with_suggestions(request)
    assert seen == [json.loads(meta.read_text())["shared"]] and seen[0] > 0


def test_the_sweep_a_suggestion_names_keeps_the_build_less_the_swept_macro() -> None:
    from shmem_cli.trace.fixes.kernel_terms import _without_macro

    words = ["-b", "256", "--arch", "sm_90a", "--nvcc-arg=-I/opt/cutlass/include"]
    pads = ["--nvcc-arg=-DPAD=4", "--nvcc-arg=-UPAD", "--nvcc-arg=-D", "--nvcc-arg=PAD=2"]
    # nvcc's long spellings name the macro too (as --nvcc-arg takes them)
    pads += ["--nvcc-arg=--define-macro=PAD=8", "--nvcc-arg=--undefine-macro", "--nvcc-arg=PAD"]
    kept = ["--nvcc-arg=-DPADDED=1", "--nvcc-arg=-DTILE=32", "--nvcc-arg=--define-macro=PADS"]
    assert _without_macro([*words, *pads, *kept], "PAD") == [*words, *kept]


@pytest.mark.slow  # one nvcc build
@needs_nvcc
@needs_nvdisasm
def test_a_suggested_sweep_of_a_cu_carries_its_build_options() -> None:
    source = str(FIXES / "kernels" / "warp_sgemm.cu")
    args = ("-b", "256", *SGEMM_ARGS, "--nvcc-arg=-DPAD=0", "--nvcc-arg=-DUNUSED=3")
    kernel = run_suggest(source, *args, "--arch", "sm_90")
    sweeps = {s["sweep"] for s in kernel["suggestions"] if s.get("sweep")}
    assert sweeps, kernel["suggestions"]
    for sweep in sweeps:
        assert "--arch sm_90" in sweep and "--nvcc-arg=-DUNUSED=3" in sweep
        assert "-DPAD=0" not in sweep and "--define PAD=" in sweep


@pytest.mark.slow  # 3-6 s; the other --suggest tests stay fast
@needs_nvdisasm
def test_a_pad_of_a_triton_entrys_dynamic_shared_memory_is_said_in_bytes() -> None:
    """The entry's dynamic shared memory is one array of unknown element type (2,048 B,
    rows of 128 B: 16 rows; it reads 2-byte values): a pad is said in bytes, not in
    elements of a guessed size ("pad 2 elements (4 B) a row")."""
    entry = Path(__file__).parent / "data" / "triton" / "tutorial36b" / "cache"
    entry /= "3FNQ25SC43JHMGS2LQXOXKIPOY55VQAANUKOR4JACETEHB5LGSXQ"  # lnb_dwdb_4x512
    args = [str(entry), "-g", "4", "-a", "n_rows=4", "-a", "n_cols=512", "--suggest"]
    result = CliRunner().invoke(main, ["trace", *args, "--no-color", "--width", "200"])
    assert result.exit_code == 0, result.output
    block = result.output[result.output.index("layout suggestions for dynamic shared") :]
    rows = [line.split() for line in block.splitlines()[2:8]]
    pads = {(r[2], r[6]) for r in rows if r[1:2] == ["pad"]}
    assert ("4", "+64") in pads and ("2", "+32") in pads, block  # 16 rows padded 4 B, 2 B
    assert all(r[3:6] == ["B", "a", "row"] for r in rows if r[1:2] == ["pad"]), block
    assert "element" not in block.split("\n1. ")[0], block


@pytest.mark.slow  # 2-3 s: a trace with --suggest
@needs_nvdisasm
def test_each_changed_instruction_is_said_before_and_after_under_a_header_that_says_so() -> None:
    # the column held "32 / 128 -> 32 / 32" under "requests / wavefronts": now its title says
    # which side is which; the before side is what the H200 measured for that instruction
    args = ("-b", "256", *SGEMM_ARGS, "--suggest", "--no-tables", "--no-color")
    out = CliRunner().invoke(main, ["trace", str(cubin("warp_sgemm", 0)), *args]).output
    heads = [line for line in out.splitlines() if line.lstrip().startswith("pc ")]
    assert heads and all("req / wf: before -> after" in line for line in heads), out
    doc = json.loads((FIXES / "measured.json").read_text())
    (pad0,) = [launch for launch in doc["launches"] if launch["id"] == "warp_sgemm_pad0"]
    h200 = {i["pc"]: (i["executed"], i["wavefronts"]) for i in pad0["instructions"]}
    rows = [line.split() for line in out.splitlines() if line.startswith("   0x")]
    assert len(rows) > 20, out
    for row in rows:
        arrow = row.index("->")
        before, after = row[arrow - 3 : arrow], row[arrow + 1 : arrow + 4]
        assert before[1] == after[1] == "/", row
        counts = (int(before[0].replace(",", "")), int(before[2].replace(",", "")))
        assert counts == h200[int(row[0], 16)], row
