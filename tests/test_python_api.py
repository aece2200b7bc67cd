"""The documented Python API (docs/python.md): shmem_cli.trace, shmem_cli.analyze, the test
helper, and shmem_cli.trace_triton (the last only where Triton is installed)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.testing import assert_no_bank_conflicts

from .conftest import ROOT, TEST_DATA, TRACE_DATA, needs_nvdisasm

TRITON_DATA = TEST_DATA / "triton"
LAUNCHES = {L["id"]: L for L in json.loads((TRITON_DATA / "launches.json").read_text())["launches"]}

needs_triton = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None,
    reason="Triton is not installed (pip install 'shmem[triton]')",
)


def command_json(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = json.loads(result.output)
    return doc


@needs_nvdisasm
def test_trace_of_a_triton_entry_equals_the_commands_json() -> None:
    entry = str(TRITON_DATA / LAUNCHES["layernorm"]["entry"])
    result = shmem_cli.trace(entry, grid=2, args={"n_cols": 768, "eps": 1e-5})
    assert result.to_json() == command_json(
        "trace", entry, "--grid", "2", "--arg", "n_cols=768", "--arg", "eps=1e-05"
    )
    assert [a.op for a in result.accesses] == ["store", "load", "store", "load"]
    assert result.totals["load"].requests == 16


@needs_nvdisasm
def test_trace_of_a_cubin_equals_the_commands_json() -> None:
    cubin = str(TRACE_DATA / "column_read.sm_90.cubin")
    result = shmem_cli.trace(cubin, block=(32, 32))
    assert result.to_json() == command_json("trace", cubin, "--block", "32,32")
    (load,) = [a for a in result.accesses if a.op == "load"]
    assert (load.line, load.result.wavefronts, load.result.max_ways) == (9, 1024, 32)


@needs_nvdisasm
def test_arguments_may_be_arrays_and_positions() -> None:
    import numpy as np

    cubin = str(TRACE_DATA / "column_read.sm_90.cubin")
    data = np.arange(32 * 32, dtype=np.float32)
    result = shmem_cli.trace(cubin, block=(32, 32), args={1: data})
    (label, value) = dict(result.kernel.launch.arguments).popitem()
    assert label == "1 (in)" and value.endswith("(4,096 B)")


def test_a_triton_cubin_copied_out_of_its_entry_is_said_as_the_command_says_it(
    tmp_path: Path,
) -> None:
    """Without block, the API names the cubin's Triton entry as ``shmem trace`` does."""
    lone = tmp_path / "layernorm_rows.cubin"
    lone.write_bytes((TRITON_DATA / LAUNCHES["layernorm"]["entry"] / lone.name).read_bytes())
    with pytest.raises(shmem_cli.ShmemError) as err:
        shmem_cli.trace(lone, grid=2)
    said = err.value.message
    assert err.value.code == "invalid-launch" and err.value.path == str(lone)
    assert said.startswith("this cubin is from a Triton cache entry (its line table names ")
    assert "layernorm_rows.json and layernorm_rows.ttgir are not beside it" in said
    assert "block is required" not in said
    command = CliRunner().invoke(main, ["trace", str(lone), "--grid", "2"])
    assert command.exit_code == 2
    assert " ".join(command.output.split()) == f"{lone}: error: {' '.join(said.split())}"


def test_bad_input_raises_shmem_error_with_its_code() -> None:
    with pytest.raises(shmem_cli.ShmemError) as err:
        shmem_cli.trace(TRACE_DATA / "column_read.sm_90.cubin")
    assert err.value.code == "invalid-launch" and "block is required" in err.value.message
    assert "block=256" in err.value.message and "--block" not in err.value.message
    with pytest.raises(shmem_cli.ShmemError) as err:
        shmem_cli.trace(TRACE_DATA / "column_read.sm_90.cubin", block=(32, 0))
    assert err.value.code == "invalid-launch"
    with pytest.raises(shmem_cli.ShmemError) as err:
        shmem_cli.trace(TRACE_DATA / "column_read.sm_90.cubin", block=32, args={"in": object()})
    assert err.value.code == "invalid-launch" and "not a kernel argument" in err.value.message


@needs_nvdisasm
def test_a_bad_name_raises_with_the_kernel_code() -> None:
    with pytest.raises(shmem_cli.ShmemError) as err:
        shmem_cli.trace(TRITON_DATA / "cache", kernel="nope")
    assert err.value.code == "invalid-kernel"


def test_analyze_equals_the_commands_json_entry() -> None:
    spec = str(ROOT / "access_specs" / "column_read_32x32.yaml")
    result = shmem_cli.analyze(spec)
    doc = command_json("analyze", spec)
    assert result.to_json() == doc["files"][0]  # type: ignore[index]


@needs_nvdisasm
def test_assert_no_bank_conflicts_passes_a_clean_kernel_and_names_a_conflict() -> None:
    clean = shmem_cli.trace(TRITON_DATA / LAUNCHES["transpose"]["entry"], grid=(2, 2))
    assert_no_bank_conflicts(clean)
    conflicted = shmem_cli.trace(TRACE_DATA / "column_read.sm_90.cubin", block=(32, 32))
    with pytest.raises(AssertionError) as err:
        assert_no_bank_conflicts(conflicted)
    text = str(err.value)
    assert text.startswith("1 shared-memory access(es) with bank conflicts:")
    assert "column_read.cu:9 pc 0x" in text and "LDS R9, [R6]" in text
    assert "32-way, 1,024 wavefronts for an ideal of 32 (992 excess) in 32 requests" in text
    # the bank table of the worst request: all 32 lanes in bank 0, one per wavefront
    assert "\n    wf 0  1  2  3" in text and "\n     0 0\n     1 1\n     2 2\n" in text
    for allow in (9, "column_read.cu:9", "LDS", "0x" + text.split(" pc 0x")[1][:4]):
        assert_no_bank_conflicts(conflicted, allow=[allow])
    # an allow that names no access (a line off by one, another file, an opcode not there)
    # is said beneath the conflicts it failed to allow; one that names a clean access is not
    with pytest.raises(AssertionError) as err:
        assert_no_bank_conflicts(conflicted, allow=[10, "k.cu:9", "LDS.64", "STS"])
    assert str(err.value).endswith("\nallow names no access of the result: 10, 'k.cu:9', 'LDS.64'")


def test_assert_no_bank_conflicts_on_a_spec() -> None:
    conflicted = shmem_cli.analyze(ROOT / "access_specs" / "column_read_32x32.yaml")
    with pytest.raises(AssertionError, match="32-way"):
        assert_no_bank_conflicts(conflicted)
    assert_no_bank_conflicts(shmem_cli.analyze(ROOT / "access_specs/column_read_32x33.yaml"))


def test_assert_no_bank_conflicts_passes_an_excess_without_a_bank_conflict() -> None:
    # tutorial_wide.yaml: lanes 0 and 16 storing 8 bytes touch two phases for 16 bytes, an
    # excess over the ideal with no bank conflict (ok*); the stride-2 read is a conflict
    wide = shmem_cli.analyze(ROOT / "access_specs" / "tutorial_wide.yaml")
    by_name = {a.name: a for a in wide.accesses}
    starred = by_name["d[lane] = v (lanes 0 and 16)"]
    assert starred.cost.verdict == "ok*" and starred.excess_wavefronts > 0
    with pytest.raises(AssertionError, match="stride 2") as raised:
        assert_no_bank_conflicts(wide)
    assert "lanes 0 and 16" not in str(raised.value)
    assert_no_bank_conflicts(wide, allow=["d[2*lane] (stride 2)"])


def test_trace_is_callable_whatever_was_imported_first() -> None:
    import shmem_cli.trace.pipeline  # noqa: F401  (binds shmem_cli.trace to the package)

    assert callable(shmem_cli.trace)
    from shmem_cli import trace

    assert callable(trace)


def test_trace_triton_without_triton_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "triton", None)  # import triton fails
    with pytest.raises(shmem_cli.ShmemError) as err:
        shmem_cli.trace_triton(lambda: None, {}, {})
    assert err.value.code == "tool-missing" and "pip install 'shmem[triton]'" in err.value.message


@needs_triton
@needs_nvdisasm
def test_trace_triton_compiles_ahead_of_time_like_the_kept_entry(tmp_path: Path) -> None:
    sys.path.insert(0, str(TRITON_DATA))
    try:
        import kernels  # tests/data/triton/kernels.py, the project's own Triton kernels
    finally:
        sys.path.remove(str(TRITON_DATA))
    L = LAUNCHES["matmul_f16"]
    signature = {
        "c_ptr": "*fp16",
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "m": "i32",
        "n": "i32",
        "k": "i32",
    }
    result = shmem_cli.trace_triton(
        kernels.matmul_tiles,
        signature,
        L["constexprs"],
        num_warps=L["num_warps"],
        num_stages=L["num_stages"],
        grid=tuple(L["grid"]),
        args=L["args"],
        keep=tmp_path / "entry",
    )
    assert (tmp_path / "entry" / "matmul_tiles.ttgir").is_file()
    import triton

    built_with = json.loads((TRITON_DATA / "launches.json").read_text())["triton"]
    if triton.__version__ != built_with:
        assert result.totals["ldmatrix"].requests > 0  # another Triton: other code, still traced
        return
    kept = shmem_cli.trace(TRITON_DATA / L["entry"], grid=tuple(L["grid"]), args=L["args"])
    # the same kernel: the same instructions and counts as the entry measured on the H200
    assert [(a.pc, a.sass) for a in result.accesses] == [(a.pc, a.sass) for a in kept.accesses]
    assert {op: t for op, t in result.totals.items()} == {op: t for op, t in kept.totals.items()}


def test_trace_triton_compiles_in_the_integer_arguments_that_are_one() -> None:
    """Triton's launcher compiles an integer argument of 1 (a unit stride) into the kernel;
    trace_triton does the same for the arguments it is given (not for a bool, nor a 1.0)."""
    from shmem_cli.trace.triton.compile import unit_arguments

    signature = {"x": "*fp32", "n": "i32", "s": "i32", "t": "i64", "f": "i1", "g": "fp32"}
    args = {"n": 1000, "s": 1, "t": 1, "f": True, "g": 1.0}
    assert unit_arguments(signature, args) == {"s", "t"}
    assert unit_arguments(signature, {1: 1, "s": 2}) == {"n"}  # by position too


def test_trace_triton_specializes_as_the_jit_functions_own_settings_say() -> None:
    """Triton's launcher neither compiles in a 1 nor hints divisibility for a parameter
    ``do_not_specialize`` names, nor hints one ``do_not_specialize_on_alignment`` names
    (triton/runtime/jit.py, 3.2 to 3.6: specialize_impl's specialize_value and align)."""
    from shmem_cli.trace.triton.compile import divisibility, not_specialized, unit_arguments

    class Param:
        def __init__(self, name: str, whole: bool = False, align: bool = False) -> None:
            self.name = name
            self.do_not_specialize, self.do_not_specialize_on_alignment = whole, align

    class Jit:
        arg_names = ["x", "n", "s", "t"]
        params = [Param("x", align=True), Param("n"), Param("s", whole=True), Param("t")]

    fixed, unaligned = not_specialized(Jit())
    assert (fixed, unaligned) == ({"s"}, {"s", "x"})
    signature = {"x": "*fp32", "n": "i32", "s": "i32", "t": "i32"}
    args = {"n": 32, "s": 1, "t": 1}
    assert unit_arguments(signature, args) - fixed == {"t"}
    assert set(divisibility(signature, {"n": 32, "s": 16}, None, unaligned)) == {(1,)}
    assert not_specialized(len) == (set(), set())  # a plain function: every one specialized


def test_trace_triton_gives_positional_arguments_by_name() -> None:
    """A parameter compiled in as 1 leaves the kernel: position 4 was then the next one's."""
    from shmem_cli.trace.triton.compile import by_name

    signature = {"o": "*fp32", "i": "*fp32", "n": "i32", "rs": "i32", "cs": "i32", "k": "fp32"}
    assert by_name(signature, {4: 1, 5: 0.5, "n": 7, 9: 3}) == {"cs": 1, "k": 0.5, "n": 7, 9: 3}


@needs_triton
@needs_nvdisasm
def test_trace_triton_builds_the_kernel_the_call_runs(tmp_path: Path) -> None:
    """centred_rows called with col_stride=1: the same SASS as the kept entry compiled with
    col_stride a constexpr of 1 (tests/data/triton/called), where the Triton is the same."""
    sys.path.insert(0, str(TRITON_DATA))
    try:
        import kernels
    finally:
        sys.path.remove(str(TRITON_DATA))
    import triton

    signature = {
        "out_ptr": "*fp32",
        "in_ptr": "*fp32",
        "n_cols": "i32",
        "row_stride": "i32",
        "col_stride": "i32",
        "scale": "fp32",
        "CENTRE": "i1",
    }
    args = {"n_cols": 1000, "row_stride": 1024, "col_stride": 1, "scale": 0.5, "CENTRE": True}
    result = shmem_cli.trace_triton(
        kernels.centred_rows, signature, grid=2, args=args, keep=tmp_path / "entry"
    )
    assert result.totals["load"].requests > 0  # CENTRE's tl.sum: through shared memory
    kept = TRITON_DATA / "called" / triton.__version__
    if not kept.is_dir():
        return  # another Triton: other code, still traced
    (meta,) = kept.glob("*/centred_rows.json")
    folder = meta.parent
    if tuple(int(n) for n in triton.__version__.split(".")[:2]) >= (3, 5):
        args.pop("col_stride")  # a TTGIR that names its parameters has none for it
    want = shmem_cli.trace(folder, grid=2, args=args)
    assert [(a.pc, a.sass) for a in result.accesses] == [(a.pc, a.sass) for a in want.accesses]


def test_trace_triton_places_its_attributes_by_the_defs_order() -> None:
    """Triton numbers a kernel's parameters as its def has them, constexprs included: a
    constexpr before other parameters moves their divisibility hints (they went to the
    neighbours, compiling another kernel than the call; Triton 3.3 failed to compile)."""
    from shmem_cli.trace.triton.compile import divisibility, parameter_order

    class Jit:  # what a @triton.jit function says of its def
        arg_names = ["x_ptr", "BLOCK", "y_ptr", "n"]

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
    order = parameter_order(Jit(), signature, {"BLOCK": 1024})
    assert order == ["x_ptr", "BLOCK", "y_ptr", "n"]
    assert set(divisibility(signature, {"n": 4096}, order)) == {(0,), (2,), (3,)}
    # without a def to read (a plain function), the signature's order and the constexprs last
    assert parameter_order(len, signature, {"BLOCK": 1024}) == ["x_ptr", "y_ptr", "n", "BLOCK"]


def test_trace_triton_names_the_parameters_its_call_leaves_out_or_misspells() -> None:
    """Checked against the def before Triton compiles (which failed at the first use of a
    parameter left out, in the kernel's body, or said a misspelt argument as the compiled
    kernel's): what a @triton.jit function says of its def, its params and its Python fn."""
    from types import SimpleNamespace

    from shmem_cli.trace.triton.compile import check_parameters

    def body(x_ptr, y_ptr, n, BLOCK, SCALE=2):  # type: ignore[no-untyped-def]  # noqa: N803
        """The kernel's Python def: SCALE has a default, which the launcher fills in."""

    params = [SimpleNamespace(name=n, is_constexpr=n.isupper()) for n in ("x_ptr", "y_ptr", "n")]
    params += [SimpleNamespace(name=n, is_constexpr=True) for n in ("BLOCK", "SCALE")]
    jit = SimpleNamespace(params=params, fn=body, __name__="scale_rows")
    types = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
    check_parameters(jit, types, {"BLOCK": 128}, {"n": 4})  # SCALE has its default
    cases = [
        ({"x_ptr": "*fp32"}, {"BLOCK": 128}, {}, "scale_rows takes y_ptr, n: give each its "
         "Triton type in signature ('*fp16', 'i32', 'fp32')"),
        (types, {}, {}, "scale_rows takes the tl.constexpr BLOCK: give each its value in "
         "constexprs"),
        ({**types, "m": "i32"}, {"BLOCK": 128}, {}, "signature names m, not parameters of "
         "scale_rows's def"),
        (types, {"BLOCK": 128, "BLK": 1}, {}, "constexprs names BLK, not parameters of "
         "scale_rows's def"),
        (types, {"BLOCK": 128}, {"N": 4}, "args names N, not in signature (x_ptr, y_ptr, n)"),
    ]  # fmt: skip
    for signature, constexprs, args, said in cases:
        with pytest.raises(shmem_cli.ShmemError) as err:
            check_parameters(jit, signature, constexprs, args)
        assert err.value.message == f"trace_triton(): {said}"
        assert err.value.code == "invalid-argument"


@needs_nvdisasm
def test_a_result_and_its_records_print_in_a_line_each() -> None:
    """In a REPL a result prints what it is, not every bank table and heat map it holds (the
    dataclass repr of a small kernel's result ran to 350 KB, a row's to 7 KB)."""
    result = shmem_cli.trace(TRACE_DATA / "column_read.sm_90.cubin", block=(32, 32))
    whole = repr(result)
    assert len(whole) < 500 and whole.startswith("TraceResult(files=[FileTrace(path=")
    assert "name='column_read'" in whole and "block=(32, 32, 1)" in whole
    load = result.totals["load"]
    assert f"load: {load.requests}/{load.wavefronts}/{load.ideal_wavefronts}" in whole
    (worst,) = [a for a in result.accesses if a.verdict == "conflict"]
    row = repr(worst)
    assert len(row) < 300 and f"pc=0x{worst.pc:04x}" in row and "line='column_read.cu:9'" in row
    assert f"wavefronts={worst.result.wavefronts}" in row and "verdict='conflict'" in row
    assert repr(result.kernel) in whole
