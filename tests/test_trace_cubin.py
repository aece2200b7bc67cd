"""Kernel metadata from cubins (shmem_cli.trace.kernel.cubin), names and parameter names.

The cubins in tests/data/trace/ are built from tests/data/trace/kernels/*.cu by build.sh
(nvcc 13.0, sm_90); the expected values are read off the kernels' source by hand.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.kernel.choices import fragment
from shmem_cli.trace.kernel.cubin import CubinInfo, Kernel, find_kernel, read_cubin
from shmem_cli.trace.kernel.demangle import demangle, demangle_all, short_name
from shmem_cli.trace.kernel.signature import declarator_name, param_names

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvdisasm

META = DATA / "meta.sm_90.cubin"


@pytest.fixture(scope="module", params=[True, False], ids=["with-tools", "own-demangler"])
def meta(request: pytest.FixtureRequest) -> CubinInfo:
    return read_cubin(META, use_tools=request.param)


def kernels_by_name(info: CubinInfo) -> dict[str, Kernel]:
    return {k.name: k for k in info.kernels}


def test_entry_functions_and_their_names(meta: CubinInfo) -> None:
    info = meta
    assert info.arch == "sm_90"
    names = kernels_by_name(info)
    assert set(names) == {
        "tiled_copy<32, float>",
        "tiled_copy<16, double>",
        "by_value",
        "no_shared",
    }
    k = names["tiled_copy<32, float>"]
    assert k.mangled == "_Z10tiled_copyILi32EfEvPT0_PKS0_if"
    assert k.signature == "void tiled_copy<32, float>(float*, float const*, int, float)"


def test_parameters_offsets_and_sizes(meta: CubinInfo) -> None:
    names = kernels_by_name(meta)
    # (float* out, const float* in, int rows, float scale): 8, 8, 4, 4 bytes at 0, 8, 16, 20
    k = names["tiled_copy<32, float>"]
    assert [(p.ordinal, p.offset, p.size) for p in k.params] == [
        (0, 0, 8),
        (1, 8, 8),
        (2, 16, 4),
        (3, 20, 4),
    ]
    assert (k.param_base, k.param_bytes) == (0x210, 24)
    # (Dims d, float* out): a 12-byte struct, then a pointer aligned to 8
    k = names["by_value"]
    assert [(p.ordinal, p.offset, p.size) for p in k.params] == [(0, 0, 12), (1, 16, 8)]


def test_static_shared_memory(meta: CubinInfo) -> None:
    names = kernels_by_name(meta)
    assert names["tiled_copy<32, float>"].static_shared_bytes == 32 * 33 * 4
    assert names["tiled_copy<16, double>"].static_shared_bytes == 16 * 17 * 8
    assert names["by_value"].static_shared_bytes == 0
    # sm_90 keeps 1 KiB reserved in front: the variables (and then extern memory) follow it
    k = names["tiled_copy<32, float>"]
    assert k.reserved_shared_bytes == 1024
    assert k.dynamic_shared_base == 1024 + 32 * 33 * 4


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tiled_copy<32, float>", "tiled_copy<32, float>"),
        ("tiled_copy<32,float>", "tiled_copy<32, float>"),
        ("_Z10tiled_copyILi16EdEvPT0_PKS0_if", "tiled_copy<16, double>"),
        ("tiled_copy<16", "tiled_copy<16, double>"),
        ("by_", "by_value"),
        ("no_shared", "no_shared"),
    ],
)
def test_kernel_selection(query: str, expected: str) -> None:
    assert find_kernel(read_cubin(META), query).name == expected


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("tiled_copy", "is ambiguous; it matches:\n  tiled_copy<16, double>"),
        ("nothere", "no kernel matches --kernel 'nothere'; the cubin holds:\n"),
        (None, "the cubin holds several kernels: choose one with --kernel"),
    ],
)
def test_unknown_or_ambiguous_kernels_list_the_kernels(query: str | None, says: str) -> None:
    with pytest.raises(ShmemError) as err:
        find_kernel(read_cubin(META), query)
    assert says in err.value.message
    assert "  by_value" in err.value.message or "tiled_copy<32, float>" in err.value.message
    assert err.value.path == str(META)


# two instantiations whose names agree for hundreds of characters (tests/data/trace/twins)
TWINS = DATA / "twins" / "twins.sm_90.cubin"


def test_names_alike_for_long_are_listed_from_where_they_differ() -> None:
    cubin = read_cubin(TWINS)
    with pytest.raises(ShmemError) as err:
        find_kernel(cubin, "twin_copy")
    message = err.value.message
    assert "use the -k FRAGMENT its line ends with" in message
    lines = [line for line in message.splitlines() if line.startswith("  ...")]
    assert len(lines) == 2
    chosen = set()
    for mode in ("L<C<1>, char>", "L<C<2>, short>"):  # the demangled part that differs
        (line,) = [line for line in lines if mode in line]
        # the mangled part, shown from before where the two differ, names its kernel alone
        part = line.split("  -k ")[0].rsplit("(...", 1)[1].rstrip(")")
        kernel = find_kernel(cubin, part)
        assert kernel is find_kernel(cubin, mode) and kernel.mangled.endswith(part)
        chosen.add(kernel.mangled)
    assert len(chosen) == 2


def _kernels_each_line_picks(info: CubinInfo, query: str | None) -> list[tuple[str, str]]:
    """Each line of ``find_kernel(info, query)``'s refusal as (the kernel its ending ``-k``
    picks, that fragment), each kernel checked to be the one its own line names."""
    with pytest.raises(ShmemError) as err:
        find_kernel(info, query)
    message = err.value.message
    assert message.endswith(
        "use the -k FRAGMENT its line ends with (a part of its mangled "
        "name that no other kernel's names hold), or its whole mangled name"
    )
    picked = []
    for line in [line for line in message.splitlines() if line.startswith("  ")]:
        shown, part = line.rsplit("  -k ", 1)
        kernel = find_kernel(info, part)
        # the kernel of that line, none other: its name (mangled, or extern "C") ends the line
        name = shown.rsplit("(", 1)[1].rstrip(")") if shown.endswith(")") else shown
        assert kernel.mangled.endswith(name.strip().removeprefix("..."))
        assert part in kernel.mangled
        picked.append((kernel.mangled, part))
    return picked


@pytest.mark.parametrize(("cubin", "query"), [(META, "tiled"), (TWINS, "twin")])
def test_each_ambiguous_kernel_line_ends_with_the_k_that_picks_it(cubin: Path, query: str) -> None:
    picked = _kernels_each_line_picks(read_cubin(cubin), query)
    assert len({kernel for kernel, _ in picked}) == len(picked) == 2
    assert all(len(part) < len(kernel) for kernel, part in picked)  # a part, not the name


@pytest.mark.parametrize("cubin", [META, TWINS])
@pytest.mark.parametrize("query", [None, "nothere"])
def test_each_listed_kernel_of_no_match_or_no_choice_ends_with_the_k_that_picks_it(
    cubin: Path, query: str | None
) -> None:
    info = read_cubin(cubin)
    picked = _kernels_each_line_picks(info, query)
    assert sorted(kernel for kernel, _ in picked) == sorted(k.mangled for k in info.kernels)


def test_a_mangled_name_inside_another_is_picked_whole() -> None:
    # _Z1fv is a part of _Z1fv2 (hand-made names): no shorter part of it is its alone
    short = Kernel("_Z1fv", "f", "void f()", (), 0, 0, 0, 0, 0)
    long = Kernel("_Z1fv2", "g", "void g()", (), 0, 0, 0, 0, 0)
    assert fragment(short, (short, long)) == "_Z1fv"
    assert fragment(long, (short, long)) == "_Z1fv2"
    assert fragment(short, (short,)) == "_Z1fv"


def test_not_a_cubin_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.cubin"
    junk.write_bytes(b"\x7fELF" + bytes(60))
    with pytest.raises(ShmemError, match="not a valid cubin"):
        read_cubin(junk)
    cut = tmp_path / "cut.cubin"
    cut.write_bytes(META.read_bytes()[:2000])
    with pytest.raises(ShmemError, match="not a valid cubin: its section table"):
        read_cubin(cut)
    host = tmp_path / "host"
    data = bytearray(META.read_bytes())
    struct.pack_into("<H", data, 18, 62)  # EM_X86_64
    host.write_bytes(bytes(data))
    with pytest.raises(ShmemError, match="not a cubin"):
        read_cubin(host)


@pytest.mark.parametrize(
    ("mangled", "full"),
    [
        ("_Z7colreadILi32EEvPfPKfif", "void colread<32>(float*, float const*, int, float)"),
        (
            "_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii",
            "void MatrixMulCUDA<32>(float*, float*, float*, int, int)",
        ),
        ("_Z7reduce0IfEvPT_S1_j", "void reduce0<float>(float*, float*, unsigned int)"),
        ("_ZN2ns3fooEPKfRi", "ns::foo(float const*, int&)"),
        ("_Z3barIfLb1EEvPT_S1_i", "void bar<float, true>(float*, float*, int)"),
        ("_Z1fv", "f()"),
        ("plain", "plain"),
    ],
)
def test_own_demangler(mangled: str, full: str) -> None:
    assert demangle(mangled) == full


def test_own_demangler_agrees_with_cxxfilt_where_found() -> None:
    tool = shutil.which("c++filt")
    if tool is None:
        pytest.skip("c++filt is not installed")
    names = [k.mangled for k in read_cubin(META).kernels]
    res = subprocess.run([tool, *names], capture_output=True, text=True, check=True)
    assert [demangle(n) for n in names] == res.stdout.splitlines()


def test_short_names() -> None:
    assert short_name("void MatrixMulCUDA<32>(float*, float*)") == "MatrixMulCUDA<32>"
    assert short_name("(anonymous namespace)::k(int)") == "(anonymous namespace)::k"
    assert short_name("void ns::k<a::b<int, int> >(int)") == "ns::k<a::b<int, int> >"
    assert short_name("by_value") == "by_value"


def test_parameter_names_from_the_source() -> None:
    source = (DATA / "kernels" / "meta.cu").read_text()
    assert param_names([source], "tiled_copy<32, float>", 4) == ["out", "in", "rows", "scale"]
    assert param_names([source], "by_value", 2) == ["d", "out"]
    assert param_names([source], "no_shared", 2) == ["p", "n"]
    assert param_names([source], "no_shared", 3) is None  # the count must match the cubin's
    assert param_names([source], "missing", 1) is None


@pytest.mark.parametrize(
    ("decl", "name"),
    [
        ("const float *__restrict__ A", "A"),
        ("unsigned n", "n"),
        ("unsigned int", None),
        ("T", None),
        ("cute::Shape<int, int> shape", "shape"),
        ("float c[4] = 0", "c"),
        ("const __grid_constant__ CUtensorMap map", "map"),
    ],
)
def test_declarator_names(decl: str, name: str | None) -> None:
    assert declarator_name(decl) == name


def test_a_commented_out_or_non_global_declaration_is_skipped() -> None:
    source = (
        "// __global__ void k(int a, int b);\n"
        "__device__ void k(int c, int d) {}\n"
        "template <int N> __global__ void __launch_bounds__(256) k(int x, int y) {}\n"
    )
    assert param_names([source], "k<8>", 2) == ["x", "y"]


def test_a_part_only_one_kernel_has_selects_it() -> None:
    """A library's instantiations differ deep inside their template arguments: a part of
    the name that only one of them holds picks it."""
    assert find_kernel(read_cubin(META), "_copy<32").name == "tiled_copy<32, float>"
    assert find_kernel(read_cubin(META), "double>").name == "tiled_copy<16, double>"


def test_names_that_begin_alike_are_listed_from_where_they_differ() -> None:
    long = "ns::device_kernel<" + "Outer<" * 30
    kernels = tuple(
        Kernel(f"_Zk{i}", f"{long}Schedule{i}>", f"{long}Schedule{i}>", (), 0, 0, 0, 0, 0)
        for i in ("Cooperative", "PingPong")
    )
    with pytest.raises(ShmemError) as err:
        find_kernel(CubinInfo("k.cubin", "sm_90", kernels), "nothing")
    lines = err.value.message.splitlines()[1:-1]  # between the first line and the last
    assert [line.split("Schedule")[1][:8] for line in lines] == ["Cooperat", "PingPong"]
    assert all(line.startswith("  ...") and len(line) < 150 for line in lines)


def test_a_name_nested_past_cxxfilts_recursion_limit_is_demangled() -> None:
    # CUTLASS 3.x kernels nest templates hundreds deep; GNU c++filt gives such a name back
    # mangled unless told --no-recurse-limit (and shmem's own demangler reads no argument
    # packs). f<A<A<...A<int, int>...>>>() by the Itanium ABI: each level is 1AI ... E, the
    # pack <int, int> JiiE
    tool = shutil.which("c++filt")
    if (
        tool is None
        or "GNU" not in subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    ):
        pytest.skip("GNU c++filt is not installed")
    depth = 300
    mangled = "_Z1fI" + "1AI" * depth + "JiiE" + "E" * depth + "Evv"
    written = "void f<" + "A<" * depth + "int, int" + "> " * depth + ">()"
    assert demangle_all([mangled])[mangled] == written


def test_an_extern_c_kernel_s_types_come_from_its_declaration() -> None:
    from shmem_cli.trace.kernel.signature import declared_type

    assert declared_type("const float *in", "in") == "const float *"
    assert declared_type("float *__restrict__ out", "out") == "float *"
    assert declared_type("float * const p", "p") == "float *"  # the pointer's own const
    assert declared_type("int n = 3", "n") == "int"
    assert declared_type("float a[4]", "a") is None  # an array: no type before a name
    assert declared_type("Row r", None) is None


@needs_nvdisasm
def test_a_float_of_an_extern_c_kernel_takes_an_integer_as_a_float(tmp_path: Path) -> None:
    # float_set_local(float *out, int *iout, const float *in, float s), extern "C": its
    # mangled name is its name, so the types were unknown and s=1 went as the bits 0x1
    from shmem_cli.trace.kernel.launch import plan_launch
    from shmem_cli.trace.pipeline import TraceRequest, load_kernel

    cubin = DATA / "opcodes" / "ops90.sm_90.cubin"
    loaded = load_kernel(TraceRequest(cubin, kernel="float_set_local"), tmp_path, launch=False)
    assert [p.type for p in loaded.params] == ["float *", "int *", "const float *", "float"]
    for given, bits in (("1", 0x3F800000), ("0x3f000000", 0x3F000000)):  # 1.0; 0.5's bits
        plan = plan_launch(
            loaded.kernel, list(loaded.params), block=(64, 1, 1), args=[f"s={given}"]
        )
        (s,) = [a for a in plan.arguments if a.param.name == "s"]
        assert s.data == struct.pack("<I", bits)


REQNTID = DATA / "reqntid" / "reqntid.sm_90.cubin"


def test_a_kernel_s_reqntid_is_read_and_none_without() -> None:
    (k,) = read_cubin(REQNTID).kernels
    assert k.required_block == (64, 1, 1)  # reqntid.ptx: .reqntid 64, 1, 1
    assert all(k.required_block is None for k in read_cubin(META).kernels)


@needs_nvdisasm
def test_a_reqntid_kernel_is_traced_with_its_own_block_and_refuses_another() -> None:
    import json

    from click.testing import CliRunner

    from shmem_cli.cli import main

    res = CliRunner().invoke(main, ["trace", str(REQNTID), "-f", "json"])
    assert res.exit_code == 0, res.output
    k = json.loads(res.output)["files"][0]["kernels"][0]
    assert k["block"] == [64, 1, 1]
    # by hand: 2 warps; s[2 t]: two lanes a bank, 2 wavefronts a store; s[t]: 1 a load
    assert (k["totals"]["store"]["requests"], k["totals"]["store"]["wavefronts"]) == (2, 4)
    assert (k["totals"]["load"]["requests"], k["totals"]["load"]["wavefronts"]) == (2, 2)
    res = CliRunner().invoke(main, ["trace", str(REQNTID), "-b", "64"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["trace", str(REQNTID), "-b", "128"])
    assert res.exit_code == 2
    assert "built for a block of exactly 64x1x1 (.reqntid" in res.output
    assert "leave --block out" in res.output and "Traceback" not in res.output
    # without .reqntid a binary still needs --block, said as before
    res = CliRunner().invoke(main, ["trace", str(DATA / "onewarp" / "onewarp.sm_90.cubin")])
    assert res.exit_code == 2 and "--block is required to trace" in res.output
