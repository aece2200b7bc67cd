"""`shmem trace --compare NCU.csv`: the trace beside Nsight Compute's source counters.

The CSVs in tests/data/triton/ncu are Nsight Compute's own export of the H200 run of the
project's Triton kernels (tests/data/triton/README.md); the planted differences are made
here from them, one number or one instruction changed.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.ncu.compare import compare_kernel, read_ncu_csv, sass_key
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_with_code
from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA

DATA = TEST_DATA / "triton"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
COMPARED = [
    "softmax_w4",
    "softmax_w8",
    "layernorm",
    "transpose",
    "matmul_f16",
    "matmul_bf16",
    "matmul_wgmma",
]

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def launch_args(ident: str) -> list[str]:
    L = LAUNCHES[ident]
    out = [str(DATA / L["entry"]), "--grid", ",".join(map(str, L["grid"]))]
    for k, v in L["args"].items():
        out += ["--arg", f"{k}={v}"]
    return out


def compare(ident: str, csv_path: Path, *more: str) -> Result:
    args = ["trace", *launch_args(ident), "--no-tables", "--compare", str(csv_path), *more]
    return CliRunner().invoke(main, args)


@functools.cache
def traced(ident: str) -> tuple[KernelTrace, dict[int, str]]:
    """The launch traced once for all the tests (its kernel and SASS by pc)."""
    L = LAUNCHES[ident]
    request = TraceRequest(DATA / L["entry"], grid=tuple(L["grid"]), args=arg_texts(L["args"]))
    file, code = trace_with_code(request)
    return file.kernels[0], code


def compare_json(ident: str, csv_path: Path) -> tuple[int, Any]:
    """What --compare --format json says, and its exit status (as the command decides it)."""
    kernel, code = traced(ident)
    result = compare_kernel(kernel, code, read_ncu_csv(csv_path), str(csv_path))
    return (0 if result.agrees else 1), result.to_json()


def test_the_command_and_the_library_say_the_same(tmp_path: Path) -> None:
    csv_path = DATA / "ncu" / "matmul_f16.csv"
    result = compare("matmul_f16", csv_path, "--format", "json")
    assert (result.exit_code, json.loads(result.output)["compare"][0]) == compare_json(
        "matmul_f16", csv_path
    )


@pytest.mark.slow
@pytest.mark.parametrize("ident", COMPARED)
def test_every_instruction_of_the_measured_kernels_matches(ident: str) -> None:
    code, doc = compare_json(ident, DATA / "ncu" / f"{ident}.csv")
    assert code == 0 and doc["agrees"] and not doc["different_binary"]
    verdicts = {i["verdict"] for i in doc["instructions"]}
    assert verdicts <= {"match", "cp.async"}
    for i in doc["instructions"]:
        assert i["ncu"]["executions"] == i["shmem"]["executions"]
        if i["verdict"] == "match":
            assert i["ncu"] == i["shmem"]
        else:  # LDGSTS: the source view's figure is another counter (see the module)
            assert i["sass"].startswith("LDGSTS")


def edited_csv(tmp_path: Path, ident: str, pc: int, column: str, value: str) -> Path:
    """The launch's CSV with one cell of the instruction at ``pc`` replaced."""
    rows = list(csv.reader(io.StringIO((DATA / "ncu" / f"{ident}.csv").read_text())))
    header = rows[1]
    base = int(rows[2][0], 16)
    for row in rows[2:]:
        if int(row[0], 16) - base == pc:
            row[header.index(column)] = value
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path = tmp_path / f"{ident}.csv"
    path.write_text(out.getvalue())
    return path


def first_store_pc(ident: str) -> int:
    _, doc = compare_json(ident, DATA / "ncu" / f"{ident}.csv")
    return int(next(i["pc"] for i in doc["instructions"] if i["sass"].startswith("STS")))


def test_a_planted_extra_wavefront_is_named_arbitration_and_exits_1(tmp_path: Path) -> None:
    pc = first_store_pc("transpose")
    planted = edited_csv(tmp_path, "transpose", pc, "L1 Wavefronts Shared", "24")
    code, doc = compare_json("transpose", planted)
    assert code == 1 and not doc["agrees"]
    (bad,) = [i for i in doc["instructions"] if i["verdict"] != "match"]
    assert (bad["pc"], bad["verdict"]) == (pc, "arbitration")
    assert (bad["ncu"]["wavefronts"], bad["shmem"]["wavefronts"]) == (24, 16)
    text = compare("transpose", planted).output
    assert "DISAGREE (64 instructions: 63 match, 1 arbitration)" in text
    assert "24 / 16" in text and "bank arbitration or timing" in text


def test_planted_ideal_and_execution_differences_are_named(tmp_path: Path) -> None:
    pc = first_store_pc("softmax_w4")
    ideal = edited_csv(tmp_path, "softmax_w4", pc, "L1 Wavefronts Shared Ideal", "16")
    code, doc = compare_json("softmax_w4", ideal)
    assert code == 1
    assert [i["verdict"] for i in doc["instructions"] if i["pc"] == pc] == ["addresses"]
    runs = edited_csv(tmp_path, "softmax_w4", pc, "Instructions Executed", "4")
    code, doc = compare_json("softmax_w4", runs)
    assert code == 1
    assert [i["verdict"] for i in doc["instructions"] if i["pc"] == pc] == ["launch"]


def test_another_binary_is_detected_and_nothing_is_compared() -> None:
    # softmax_w8's measurement against softmax_w4's cubin: the same kernel name, other code
    result = compare("softmax_w4", DATA / "ncu" / "softmax_w8.csv")
    assert result.exit_code == 1
    assert "a different binary:" in result.output and "nothing is compared" in result.output
    code, doc = compare_json("softmax_w4", DATA / "ncu" / "softmax_w8.csv")
    assert code == 1 and doc["different_binary"] and doc["instructions"] == []


def test_one_changed_instruction_is_a_different_binary(tmp_path: Path) -> None:
    pc = first_store_pc("layernorm")
    planted = edited_csv(tmp_path, "layernorm", pc, "Source", "      STS [R12+UR4+0x4], R3")
    code, doc = compare_json("layernorm", planted)
    assert code == 1 and doc["binary_differences"] == [
        {"pc": pc, "ncu": "STS [R12+UR4+0x4], R3", "cubin": "STS [R12+UR4], R3"}
    ]


def test_the_kernels_table_is_found_among_several(tmp_path: Path) -> None:
    both = tmp_path / "both.csv"
    both.write_text(
        (DATA / "ncu" / "layernorm.csv").read_text() + (DATA / "ncu" / "softmax_w8.csv").read_text()
    )
    assert [t.kernel for t in read_ncu_csv(both)] == ["layernorm_rows", "softmax_rows"]
    code, doc = compare_json("softmax_w8", both)
    assert code == 0 and doc["agrees"] and doc["tables"] == 1
    missing = compare("transpose", both)
    assert missing.exit_code == 2
    assert "the CSV has no table of transpose_tiles; it has: layernorm_rows, softmax_rows" in (
        missing.output
    )


def test_a_file_that_is_not_a_source_export_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "raw.csv"
    bad.write_text('"ID","Kernel Name","Metric"\n"0","k","1"\n')
    with pytest.raises(ShmemError, match="no Nsight Compute source table here"):
        read_ncu_csv(bad)
    result = compare("softmax_w4", bad)  # a raw page: compared per op (ncu.ops)
    assert result.exit_code == 2 and "the CSV has no launch of softmax_rows" in result.output
    no_counters = tmp_path / "plain.csv"
    no_counters.write_text(
        '"Kernel Name","k",\n"Address","Source","# Samples"\n"0x10","EXIT","0"\n'
    )
    with pytest.raises(ShmemError, match="no column 'Instructions Executed'"):
        read_ncu_csv(no_counters)


def test_two_printings_of_one_instruction_have_one_key() -> None:
    assert sass_key("LDGSTS.E.BYPASS.128 desc[UR10][R6.64], P0, [R36]") == sass_key(
        "LDGSTS.E.BYPASS.128 [R36], desc[UR10][R6.64], P0 ;"
    )
    assert sass_key("@P3 BRA 0x7eff477b1600") == sass_key("@P3 BRA `(.L_x_0)")
    # a return to the caller (CUTLASS's grouped GEMM on the H200): nvdisasm writes the label
    # after the register without a comma
    ret = "RET.REL.NODEC R4 `(_ZN7cutlass13device_kernelIiEEvT_)"
    assert sass_key("RET.REL.NODEC R4, 0x7fb7197a7200") == sass_key(ret)
    assert sass_key("RET.REL.NODEC R2, 0x7fb7197a7200") != sass_key(ret)
    assert sass_key("IMAD R5, R2.reuse, UR9, RZ") == sass_key("IMAD R5, R2, UR9, RZ")
    assert sass_key("@P3 BRA 0x7eff477b1600") != sass_key("@!P3 BRA 0x7eff477b1600")
    assert sass_key("STS [R1], R2") != sass_key("STS [R1+0x4], R2")
    # the disassembler's annotation of a spill, which the cubin's listing drops
    spill = 'STL.S16 [R1], R2 (*"SpillRefill"*)'
    assert sass_key(spill) == sass_key("STL.S16 [R1], R2 ;")
    assert sass_key('STL [R1], R2 (*"a"b"*)') != sass_key("STL [R1], R2")


#: a table as Nsight Compute exports it for a kernel with no shared-memory instruction: the
#: SourceCounters columns without the L1 shared ones (PyTorch Inductor's pointwise kernels)
NO_SHARED_TABLE = (
    '"Kernel Name","triton_poi_fused_relu_0"\n'
    '"Address","Source","# Samples","Instructions Executed","Address Space"\n'
    '"0x7f0000000000","S2R R0, SR_CTAID.X","0","8",""\n'
    '"0x7f0000000010","EXIT","0","8",""\n'
)


def test_a_table_without_shared_columns_is_another_kernels_or_all_zero(tmp_path: Path) -> None:
    """A multi-kernel export holds tables of kernels with no shared-memory instruction, which
    Nsight writes without the L1 shared columns: they are no error for the kernel compared,
    and such a table, read, has every shared count zero (a trace with shared traffic then
    disagrees with it)."""
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(NO_SHARED_TABLE + (DATA / "ncu" / "softmax_w8.csv").read_text())
    code, doc = compare_json("softmax_w8", mixed)
    assert code == 0 and doc["agrees"]
    assert compare("softmax_w8", mixed).exit_code == 0
    tables = read_ncu_csv(mixed)
    assert tables[0].rows == (
        (0, "S2R R0, SR_CTAID.X", {"Instructions Executed": 8, "L1 Wavefronts Shared": 0,
                                   "L1 Wavefronts Shared Ideal": 0}),
        (16, "EXIT", {"Instructions Executed": 8, "L1 Wavefronts Shared": 0,
                      "L1 Wavefronts Shared Ideal": 0}),
    )  # fmt: skip
    text = (DATA / "ncu" / "softmax_w8.csv").read_text().splitlines(keepends=True)
    head = next(i for i, line in enumerate(text) if line.startswith('"Address"'))
    columns = next(csv.reader([text[head]]))
    keep = [i for i, c in enumerate(columns) if not c.startswith("L1 Wavefronts Shared")]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in csv.reader(text[head:]):
        writer.writerow([row[i] for i in keep] if len(row) == len(columns) else row)
    stripped = tmp_path / "stripped.csv"
    stripped.write_text("".join(text[:head]) + out.getvalue())
    code, doc = compare_json("softmax_w8", stripped)
    assert code == 1 and not doc["agrees"]
    assert {i["ncu"]["wavefronts"] for i in doc["instructions"]} == {0}


def test_a_kernel_with_no_shared_instruction_agrees_in_words() -> None:
    from shmem_cli.render.trace.compare import render_compare_text
    from shmem_cli.trace.ncu.compare import KernelCompare

    empty = KernelCompare("run.csv", "triton_poi_fused_relu_0", 1, 1, (), ())
    text = render_compare_text([empty])
    assert "agree (no shared-memory instruction ran, here or on the GPU)" in text


ALIKE = TEST_DATA / "trace" / "alike"


@pytest.mark.parametrize("page", ["source", "raw"])
def test_a_sampled_grid_is_named_as_the_cause_not_the_launch(tmp_path: Path, page: str) -> None:
    # al_loaded over 64 blocks of 8 warps, every flag 0: the CSVs (tests/data/trace/alike/ncu,
    # made by hand) hold the whole grid's counts worked out by hand, 512 executions of each
    # shared instruction. Each block's guard reads its own flag, so no block stands for
    # another; under a small --max-launch-instructions the trace counts a sample of them.
    flags = tmp_path / "flags.bin"
    flags.write_bytes(bytes(4 * 64))
    csv_path = ALIKE / "ncu" / f"al_loaded_{page}.csv"
    base = [
        "trace", str(ALIKE / "alike.sm_90.cubin"), "-k", "al_loaded", "-b", "256", "-g", "64",
        "-a", f"1=@{flags}", "--no-tables", "--compare", str(csv_path),
    ]  # fmt: skip
    whole = CliRunner().invoke(main, base)
    assert whole.exit_code == 0, whole.output
    said = whole.output.split("--compare ")[-1]
    assert ": al_loaded: agree (" in said and "sample" not in said
    small = ["--max-launch-instructions", str(1 << 20)]
    result = CliRunner().invoke(main, [*base, *small])
    assert result.exit_code == 1, result.output
    assert "the trace counted a sample of the grid (" in result.output
    assert " of the 64 blocks; its note says which), Nsight Compute every block" in result.output
    assert "another grid" not in result.output  # not blamed on the launch
    doc = json.loads(CliRunner().invoke(main, [*base, *small, "--format", "json"]).output)
    compared = doc["compare"][0]
    assert compared["agrees"] is False and compared["sample"].endswith(" of the 64 blocks")
    if page == "source":
        assert [i["verdict"] for i in compared["instructions"]] == ["sample"] * 3
        assert compared["verdicts"]["sample"] == 3 and compared["verdicts"]["launch"] == 0
