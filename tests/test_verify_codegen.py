"""shmem verify's CUDA generator: expressions, addresses, kernels, and that it all compiles."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.analysis.analyze import collect_specs
from shmem_cli.spec.compile import THREAD_NAMES, load_spec, spec_from_mapping
from shmem_cli.spec.expr import CType, Expr, compile_expr
from shmem_cli.spec.space import Space
from shmem_cli.verify import codegen, program, runner, sass_check
from shmem_cli.verify.codegen import Target

from .conftest import ROOT

SPEC_FILES = collect_specs([ROOT / "access_specs"])


def _targets(mapping: dict[str, object]) -> list[Target]:
    return codegen.plan([spec_from_mapping(mapping, "t.yaml")])


def _one(dtype: str, op: str, index: list[str], **extra: object) -> Target:
    access: dict[str, object] = {"name": "a", "array": "a", "op": op, "index": index, **extra}
    (t,) = _targets(
        {"block": [64], "arrays": {"a": {"dtype": dtype, "shape": [256]}}, "accesses": [access]}
    )
    return t


ALL_TARGETS = codegen.plan([load_spec(p) for p in SPEC_FILES])


# --- expressions ---------------------------------------------------------------------------


def parse(text: str) -> Expr:
    return compile_expr(text, {**THREAD_NAMES, "k": CType.INT, "N": CType.INT})


def test_expressions_print_as_parenthesized_c_of_the_same_types() -> None:
    names = {"threadIdx.y": "b_ty", "k": "u_k", "lane": "b_lane", "N": "64"}
    assert codegen.c_expr(parse("threadIdx.y + 8*k"), names) == "(b_ty + (8 * u_k))"
    assert codegen.c_expr(parse("lane % 8 == 0 ? -N : N >> 1"), names) == (
        "(((b_lane % 8) == 0) ? (-64) : (64 >> 1))"
    )
    assert codegen.c_expr(parse("min(lane, 3) ^ !k"), names) == (
        "(shm_min_u((unsigned)b_lane, (unsigned)3) ^ (!u_k))"
    )
    assert codegen.c_expr(parse("(long long)k + 0x80000000 + 7ull"), names) == (
        "((((long long)u_k) + 2147483648u) + 7ull)"
    )
    assert [codegen.c_literal(v, t) for v, t in [(-5, CType.INT), (-(2**31), CType.INT)]] == [
        "(-5)",
        "(-2147483647 - 1)",
    ]


def test_expressions_thousands_deep_print_without_recursion() -> None:
    text = "-" * 900 + "k" + "+0" * 1500
    assert codegen.c_expr(parse(text), {"k": "u_k"}).startswith("(" * 1500)


def test_every_access_of_every_example_spec_becomes_one_kernel() -> None:
    assert len(ALL_TARGETS) == sum(len(load_spec(p).accesses) for p in SPEC_FILES)
    names = [t.kernel for t in ALL_TARGETS]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"v_[a-z0-9_]+", n) for n in names)


def test_kernel_names_stay_unique_when_two_specs_share_a_file_name() -> None:
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"a": {"dtype": "float", "shape": [32]}},
            "accesses": [{"name": "x", "array": "a", "index": ["lane"]}],
        },
        "dir1/same.yaml",
    )
    twin = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"a": {"dtype": "float", "shape": [32]}},
            "accesses": [{"name": "x", "array": "a", "index": ["lane"]}],
        },
        "dir2/same.yaml",
    )
    a, b = codegen.plan([spec, twin])
    assert (a.kernel, b.kernel) == ("v_same_00_x", "v_same_00_x_2")


def test_constant_arrays_and_kernels_never_share_a_name() -> None:
    # issue 13: access 'a' with loop list 'i' in sub1/s.yaml gave the __constant__ array
    # v_s_00_a_i, the name of the kernel of access 'a i' in sub2/s.yaml
    def one(name: str, loop: dict[str, object], path: str) -> object:
        return spec_from_mapping(
            {
                "block": [32],
                "arrays": {"a": {"dtype": "float", "shape": [64]}},
                "accesses": [{"name": name, "array": "a", "index": ["lane"], "loop": loop}],
            },
            path,
        )

    targets = codegen.plan([one("a", {"i": [0, 1]}, "sub1/s.yaml"), one("a i", {}, "sub2/s.yaml")])
    source = program.program_source(targets)
    declared = re.findall(
        r"(?:__global__ void __launch_bounds__\(\d+\)|__constant__ int) (\w+)", source
    )
    assert len(declared) == 3
    assert len(set(declared)) == 3, declared


# --- the kernels ------------------------------------------------------------------------------


def test_float4_load_keeps_all_four_components_and_stores_once_after_a_barrier() -> None:
    src = codegen.kernel_source(_one("float4", "load", ["lane"]))
    assert "const float4 v = *p;" in src
    assert (
        "__float_as_uint(v.x) + __float_as_uint(v.y) + __float_as_uint(v.z) + __float_as_uint(v.w)"
        in src
    )
    body = src[src.index("{\n") :]
    assert body.index("__syncthreads();") < body.index("sink[b_tid] = acc;")
    assert body.count("sink[") == 1


def test_stores_and_atomics_write_nothing_to_global_memory() -> None:
    for t in (_one("double", "store", ["lane"]), _one("uint32", "atomic", ["lane"], atomic="inc")):
        src = codegen.kernel_source(t)
        assert "sink[" not in src
        assert "__syncthreads" not in src


def test_atomic_kinds_map_to_their_cuda_calls() -> None:
    assert "atomicAdd(p, 1u);" in codegen.kernel_source(
        _one("uint32", "atomic", ["lane"], atomic="inc")
    )
    assert "atomicAdd(p, 1);" in codegen.kernel_source(
        _one("int32", "atomic", ["lane"], atomic="inc")
    )
    assert "atomicAdd(p, (int)(s + 1u));" in codegen.kernel_source(
        _one("int", "atomic", ["lane"], atomic="add")
    )
    assert "atomicExch(p, (unsigned int)(s + 1u));" in codegen.kernel_source(
        _one("uint32", "atomic", ["lane"], atomic="exch")
    )


def test_exch_and_cas_on_wide_elements_are_cudas_calls_on_their_type() -> None:
    assert "atomicCAS(p, (unsigned int)(s + 1u), (unsigned int)(s + 1u));" in (
        codegen.kernel_source(_one("uint32", "atomic", ["lane"], atomic="cas"))
    )
    # CUDA's 8-byte atomicExch and atomicCAS take unsigned long long only
    assert "atomicExch((unsigned long long *)p, (unsigned long long)(s + 1u));" in (
        codegen.kernel_source(_one("int64", "atomic", ["lane"], atomic="exch"))
    )
    assert "atomicExch(p, make_int4((int)s, (int)(s + 1u), (int)(s + 2u), (int)(s + 3u)));" in (
        codegen.kernel_source(_one("int4", "atomic", ["lane"], atomic="exch"))
    )


WIDE_ATOMICS = {
    (atomic, dtype): f"ATOMS.{atomic.upper()}{suffix}"
    for atomic in ("exch", "cas")
    for dtype, suffix in (("uint32", ""), ("int64", ".64"), ("uint64", ".64"), ("float4", ".128"))
}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_wide_exch_and_cas_compile_to_exactly_their_instruction(tmp_path: Path) -> None:
    targets = codegen.plan(
        [
            spec_from_mapping(
                {
                    "block": [32],
                    "arrays": {"a": {"dtype": dtype, "shape": [64]}},
                    "accesses": [
                        {"name": f"{atomic}_{dtype}", "array": "a", "op": "atomic",
                         "atomic": atomic, "index": ["lane"]}
                    ],
                },
                f"w_{atomic}_{dtype}.yaml",
            )
            for atomic, dtype in WIDE_ATOMICS
        ]
    )  # fmt: skip
    (tmp_path / "w.cu").write_text(program.program_source(targets))
    nvcc = ["nvcc", "-arch=sm_90", "-O3", "-cubin", "-o", "w.cubin", "w.cu"]
    res = subprocess.run(nvcc, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    tool = runner.which("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump is not installed")
    dump = subprocess.run(
        [tool, "-sass", str(tmp_path / "w.cubin")], capture_output=True, text=True, timeout=120
    )
    functions = sass_check.parse_sass(dump.stdout)
    for t, want in zip(targets, WIDE_ATOMICS.values(), strict=True):
        verdict = sass_check.check(functions.get(t.kernel), t.expected)
        assert (verdict.ok, verdict.found) == (True, want), (t.kernel, verdict.reason)


def test_ldmatrix_and_stmatrix_are_inline_ptx_on_the_lane_row_address() -> None:
    spec = {
        "block": [32],
        "arrays": {"m": {"dtype": "half", "shape": [64, 64]}},
        "accesses": [
            {
                "name": "l",
                "array": "m",
                "op": "ldmatrix",
                "matrices": 4,
                "trans": True,
                "index": ["lane", "0"],
            },
            {
                "name": "s",
                "array": "m",
                "op": "stmatrix",
                "matrices": 2,
                "index": ["lane % 16", "8"],
            },
        ],
    }
    ld, st = _targets(spec)
    ld_src, st_src = codegen.kernel_source(ld), codegen.kernel_source(st)
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" in ld_src
    assert "__cvta_generic_to_shared(p)" in ld_src
    assert "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" in st_src
    assert (ld.expected.opcodes, st.expected.opcodes) == (("LDSM.16.MT88.4",), ("STSM.16.M88.2",))


def test_loops_are_not_unrolled_and_list_loops_read_constant_memory() -> None:
    t = _one("float", "load", ["tid + s"], loop={"s": [128, 64, 1], "r": "0..6:3"})
    src = codegen.kernel_source(t)
    assert src.count("#pragma unroll 1") == 2
    assert "__constant__ int k_t_00_a_0[3] = {128, 64, 1};" in src  # loop variables are int
    assert "const int u_s = k_t_00_a_0[i_0];" in src
    assert "for (long long i_1 = 0; i_1 < 3LL; ++i_1)" in src  # r = 0, 3, 6
    assert "const int u_r = (int)(0ll + 3ll * i_1);" in src
    assert 'asm volatile("" ::: "memory");' in src


def test_swizzle_and_offset_enter_the_byte_address() -> None:
    (t,) = _targets(
        {
            "block": [32],
            "arrays": {
                "a": {"dtype": "half", "shape": [64, 64], "offset": 2048, "swizzle": "128B"}
            },
            "accesses": [{"name": "x", "array": "a", "index": ["lane", "0"]}],
        }
    )
    lines = codegen.address_lines(t, codegen.names_for(t))
    # 128B = Swizzle<3,4,3>: bits 7-9 of the byte offset XOR-ed into bits 4-6 (mask 0b1110000 = 112)
    assert "e_off = e_off ^ ((e_off >> 3) & 112LL);  // 128B" in lines
    assert lines[-1] == "const long long e_addr = 2048LL + e_off;"


# --- addresses: the generated C against the engine's iteration space ------------------------


def _harness(targets: list[Target]) -> str:
    """A host C++ program that prints every lane's byte address (or '-') with the generated code."""
    out = [
        "#include <cstdio>",
        codegen.helper_functions("static inline"),
    ]
    for t in targets:
        for depth, lp in enumerate(t.access.loops):
            if lp.values is not None:
                vals = ", ".join(str(v) for v in lp.values)
                name = codegen.constant_name(t.kernel, depth)
                out.append(f"static const {lp.ctype.spelling} {name}[] = {{{vals}}};")
        x, y, z = t.layout.block
        names = codegen.names_for(t)
        when = codegen.c_expr(t.access.when.expr, names) if t.access.when else "1"
        out.append(f"static void {t.kernel}() {{")
        for depth, lp in enumerate(t.access.loops):
            out += codegen.loop_head(t.kernel, lp, depth)
        out += [
            f"for (unsigned b_tz = 0; b_tz < {z}u; ++b_tz) "
            f"for (unsigned b_ty = 0; b_ty < {y}u; ++b_ty)",
            f"for (unsigned b_tx = 0; b_tx < {x}u; ++b_tx) {{",
            f"  const unsigned b_tid = b_tx + {x}u * (b_ty + {y}u * b_tz);",
            "  const unsigned b_lane = b_tid % 32u, b_warp = b_tid / 32u; "
            "(void)b_lane; (void)b_warp;",
            f"  if (({when}) != 0) {{",
            *codegen.address_lines(t, names),
            '    printf("%lld\\n", e_addr);',
            '  } else printf("-\\n");',
            "}",
            *["}" for _ in t.access.loops],
            "}",
        ]
    out.append("int main() {")
    out += [f'  printf("= {t.kernel}\\n"); {t.kernel}();' for t in targets]
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


def _engine_addresses(t: Target) -> list[str]:
    space = Space(t.spec, t.layout, t.access)
    matrix = t.op in ("ldmatrix", "stmatrix")
    rows: list[str] = []
    for batch in space.batches():
        addr = batch.addr.reshape(batch.iterations, -1)[:, : space.threads]
        live = batch.active.reshape(batch.iterations, -1)[:, : space.threads]
        for it in range(batch.iterations):
            for tid in range(space.threads):
                on = live[it, tid] and (not matrix or tid % 32 < 8 * t.access.matrices)
                rows.append(str(int(addr[it, tid])) if on else "-")
    return rows


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_generated_addresses_equal_the_engine_addresses(tmp_path: Path) -> None:
    """Every lane's byte address and activity, from the generated C (run on the host) and from
    the engine, for every access of every example spec: the kernels access what shmem analyzes."""
    src = tmp_path / "addr.cpp"
    src.write_text(_harness(ALL_TARGETS))
    exe = tmp_path / "addr"
    subprocess.run(["g++", "-O1", "-o", str(exe), str(src)], check=True, timeout=120)
    printed = subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    blocks = printed.split("= ")[1:]
    assert len(blocks) == len(ALL_TARGETS)
    for t, block in zip(ALL_TARGETS, blocks, strict=True):
        name, *rows = block.strip().split("\n")
        assert name == t.kernel
        want = _engine_addresses(t)
        if t.op in (
            "ldmatrix",
            "stmatrix",
        ):  # lanes past the address lanes are ignored by the hardware
            rows = [r if w != "-" else "-" for r, w in zip(rows, want, strict=True)]
        assert rows == want, t.kernel


def test_c_semantics_of_division_and_shifts_match_the_engine(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("needs a host C++ compiler")
    exprs = [
        "(lane - 16) / 3",
        "(lane - 16) % 3",
        "-(lane) >> 2",
        "(lane ^ 5) << 3",
        "!lane + ~lane",
        "lane != 8 && 32 / (lane - 8) > 2",
        "abs((int)lane - 20) * max(lane, 9)",
        "(lane - 1) % 32 + (lane - 1) / 2",
        "lane - 32 < 8",
    ]
    names = {"lane": "b_lane"}
    lines = [
        "#include <cstdio>",
        codegen.helper_functions("static inline"),
        "int main() {",
        "for (unsigned b_lane = 0; b_lane < 32; ++b_lane) {",
    ]
    lines += [f'printf("%lld\\n", (long long)({codegen.c_expr(parse(e), names)}));' for e in exprs]
    lines += ["}", "return 0; }"]
    (tmp_path / "e.cpp").write_text("\n".join(lines))
    subprocess.run(
        ["g++", "-o", str(tmp_path / "e"), str(tmp_path / "e.cpp")], check=True, timeout=60
    )
    got = subprocess.run(
        [str(tmp_path / "e")], check=True, capture_output=True, text=True
    ).stdout.split()
    lane = np.arange(32, dtype=np.int64)
    want = np.stack(
        [np.broadcast_to(parse(e).evaluate({"lane": lane}), (32,)) for e in exprs],
        1,
    )
    assert [int(v) for v in got] == [int(v) for v in want.reshape(-1)]


# --- compiling for real ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cubin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nvcc = runner.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    folder = tmp_path_factory.mktemp("nvcc")
    (folder / "v.cu").write_text(program.program_source(ALL_TARGETS))
    res = subprocess.run(
        [nvcc, "-arch=sm_90", "-O3", "-cubin", "-o", "v.cubin", "v.cu"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "warning" not in res.stderr
    return folder / "v.cubin"


@pytest.mark.slow
def test_generated_cuda_compiles_for_sm90(cubin: Path) -> None:
    assert cubin.stat().st_size > 0


@pytest.mark.slow
def test_compiled_kernels_have_exactly_the_intended_shared_memory_instruction(cubin: Path) -> None:
    tool = runner.which("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump is not installed")
    dump = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=120)
    if dump.returncode != 0:
        pytest.skip(f"cuobjdump -sass failed: {dump.stderr.strip()[:200]}")
    functions = sass_check.parse_sass(dump.stdout)
    verdicts = {
        t.kernel: sass_check.check(functions.get(t.kernel), t.expected) for t in ALL_TARGETS
    }
    assert {k: v.reason for k, v in verdicts.items() if not v.ok} == {}
    by_name = {t.kernel: v.found for t, v in zip(ALL_TARGETS, verdicts.values(), strict=True)}
    assert by_name["v_float4_tiles_02_row_per_thread_read_tile_tid_c_column"] == "LDS.128"
    assert by_name["v_double_tile_01_column_load_tile_tx_ty_j"] == "LDS.64"
    assert (
        by_name["v_histogram_atomics_01_atomicadd_hist_bin_1_well_mixed_bytes"]
        == "ATOMS.POPC.INC.32"
    )


def test_names_in_comments_cannot_continue_the_comment_line() -> None:
    (t,) = _targets(
        {
            "block": [32],
            "arrays": {"a": {"dtype": "float", "shape": [32]}},
            "accesses": [{"name": "ends in a backslash \\", "array": "a", "index": ["lane"]}],
        }
    )
    src = codegen.kernel_source(t)
    assert not any(line.endswith("\\") for line in src.splitlines())
