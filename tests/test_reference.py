"""The NumPy engine against the plain-Python reference model (tests/reference.py).

First the reference is checked on its own against every measured H200 case; then
hypothesis draws random valid specs and both must agree on every total.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmem_cli.analysis.analyze import analyze
from shmem_cli.spec.compile import spec_from_mapping
from shmem_cli.spec.expr import compile_expr as parse

from .hwtruth import case_to_spec, is_cas_loop, loop_invariant, probe_cases, public_cases
from .reference import c_div, c_mod, evaluate, reference_analyze, request_cost

# loop-invariant probes are left out: nvcc hoisted most of them (see test_hwtruth.py)
MEASURED = public_cases() + [
    c for c in probe_cases() if not is_cas_loop(c) and not loop_invariant(c)
]


# --- the reference on its own ------------------------------------------------------------


@pytest.mark.parametrize("case", MEASURED, ids=[c["name"] for c in MEASURED])
def test_reference_reproduces_the_h200(case: dict[str, Any]) -> None:
    (got,) = reference_analyze(spec_from_mapping(case_to_spec(case)))
    measured = case["measured"]
    assert (got.requests, got.wavefronts) == (measured["requests"], measured["wavefronts"])


def test_reference_c_arithmetic() -> None:
    assert [c_div(7, 2), c_div(-7, 2), c_div(7, -2), c_div(-7, -2)] == [3, -3, -3, 3]
    assert [c_mod(7, 3), c_mod(-7, 3), c_mod(7, -3), c_mod(-7, -3)] == [1, -1, 1, -1]
    env = {"x": 0, "y": 5}
    # short-circuit: the division by x == 0 is never evaluated
    assert evaluate(parse("x != 0 && y / x > 1"), env) == 0
    assert evaluate(parse("x == 0 || y / x > 1"), env) == 1
    assert evaluate(parse("x ? y / x : -y"), env) == -5
    assert (
        evaluate(parse("~y + !x + (y > 4) + min(-3, y) + max(x, -1) + abs(-4)"), env)
        == -6 + 1 + 1 - 3 + 0 + 4
    )
    assert evaluate(parse("-9 >> 1"), env) == -5


def test_reference_phase_rules_by_hand() -> None:
    lanes = list(range(32))
    # 4-byte, stride 2 words: lanes n and n+16 share a bank -> 2 wavefronts
    assert request_cost([8 * n for n in lanes], "load", 4, "inc", 1).wavefronts == 2
    # all lanes on one word: broadcast
    assert request_cost([64] * 32, "load", 4, "inc", 1).wavefronts == 1
    # 8-byte consecutive: two half-warp phases, each conflict-free
    assert request_cost([8 * n for n in lanes], "load", 8, "inc", 1).wavefronts == 2
    # 8-byte, lanes paired (n and n^1 equal): one whole-warp phase
    assert request_cost([8 * (n // 2) for n in lanes], "load", 8, "inc", 1).wavefronts == 1
    # ... a store never merges
    assert request_cost([8 * (n // 2) for n in lanes], "store", 8, "inc", 1).wavefronts == 2
    # lanes 0, 1, 16, 17 on doubles 0, 16, 2, 3: distance 2 pairs up (vacuously), and the
    # merged phase asks bank 0 for two words: 2, as Nsight's per-op counter has it (pairs3's
    # p8_c01_only; its per-instruction source counters count the unmerged 2 + 1)
    few = [0, 128] + [None] * 14 + [16, 24] + [None] * 14
    assert request_cost(few, "load", 8, "inc", 1).wavefronts == 2
    # 16-byte consecutive: four quarter-warp phases
    assert request_cost([16 * n for n in lanes], "load", 16, "inc", 1).wavefronts == 4
    # atomics on one address: inc combines, exch does not, add reduces uniform addresses
    assert request_cost([0] * 32, "atomic", 4, "inc", 1).wavefronts == 1
    assert request_cost([0] * 32, "atomic", 4, "exch", 1).wavefronts == 32
    assert request_cost([0] * 32, "atomic", 4, "add", 1).wavefronts == 1
    assert request_cost([0, 128] * 16, "atomic", 4, "add", 1).wavefronts == 32
    # compare-and-swap, as measured (tests/data/trace/everyday): ATOMS.CAS 2 per lane on one
    # word, 2 for distinct words, 4 (64-bit) ...
    assert request_cost([0] * 17 + [None] * 15, "atomic", 4, "cas", 1).wavefronts == 34
    assert request_cost([4 * n for n in lanes], "atomic", 4, "cas", 1).wavefronts == 2
    assert request_cost([8 * n for n in lanes], "atomic", 8, "cas", 1).wavefronts == 4
    assert request_cost([16 * n for n in lanes], "atomic", 8, "cas", 1).wavefronts == 8
    # ... ATOMS.CAST.SPIN 2 on one word; 64-bit in half-warps: 2 for each half-warp with a
    # lane on it, 4 for 32 distinct lanes (dadd_t64_b1: 380 over 127 executions)
    assert request_cost([0] * 32, "atomic", 4, "cas_spin", 1).wavefronts == 2
    assert request_cost([0] * 32, "atomic", 8, "cas_spin", 1).wavefronts == 4
    assert request_cost([0] * 16 + [None] * 16, "atomic", 8, "cas_spin", 1).wavefronts == 2
    assert request_cost([None] * 16 + [0] * 16, "atomic", 8, "cas_spin", 1).wavefronts == 2
    assert request_cost([8 * n for n in lanes], "atomic", 8, "cas_spin", 1).wavefronts == 4
    # ... and serves one wavefront per phase: two words of one bank cost what one does (the
    # other lane fails; tests/data/trace/atomloops fadd_bank_pair, dadd_bank_pairs)
    assert request_cost([0, 128] + [None] * 30, "atomic", 4, "cas_spin", 1).wavefronts == 2
    pairs = [0, 256] + [None] * 14 + [16, 272] + [None] * 14
    assert request_cost(pairs, "atomic", 8, "cas_spin", 1).wavefronts == 4
    # a generic 64-bit atomic that shared memory declines (ATOM.E.MIN.S64 P0): 1 per
    # half-warp, lanes on 32 words, on one word or in pairs (tests/data/trace/probes2)
    for addr in ([8 * n for n in lanes], [0] * 32, [8 * (n // 2) for n in lanes]):
        assert request_cost(addr, "atomic", 8, "declined", 1).wavefronts == 2
    # ldmatrix.x4 of 8 rows of 16 bytes each: 4 matrices, 4 wavefronts
    assert request_cost([16 * (n % 8) for n in lanes], "ldmatrix", 2, "inc", 4).wavefronts == 4
    # rows 128 bytes apart all sit in banks 0..3: 8-way per matrix
    cost = request_cost([128 * (n % 8) for n in lanes], "ldmatrix", 2, "inc", 2)
    assert (cost.wavefronts, cost.ideal, cost.ways) == (16, 2, 8)
    # the ideal: the phases with an active lane, at most the active lanes packed into
    # 128-byte wavefronts (Nsight's ideal, tests/data/trace/atomloops and semantics)
    pair = [0] + [None] * 15 + [0] + [None] * 15  # lanes 0 and 16 on one double
    exch, cas = (request_cost(pair, "atomic", 8, a, 1) for a in ("exch", "cas"))
    assert (exch.wavefronts, exch.ideal, cas.wavefronts, cas.ideal) == (2, 1, 4, 2)
    halves = [None] * 8 + [8 * (n % 8) for n in range(8, 16)]
    cost = request_cost(halves * 2, "load", 8, "inc", 1)  # lanes 8-15 and 24-31, 8 doubles
    assert (cost.wavefronts, cost.ideal) == (2, 1)
    cost = request_cost([8 * (n % 4) for n in lanes], "load", 8, "inc", 1)  # dadd_t64_b4
    assert (cost.wavefronts, cost.ideal) == (2, 2)
    cost = request_cost(
        [0, *[None] * 4, 0, *[None] * 4, 0, *[None] * 20, 0], "atomic", 16, "cas", 1
    )
    # lanes 0, 5, 10, 31 (sa_cas128_t32's mask): 3 quarter-warps, one packed wavefront a pass
    assert (cost.wavefronts, cost.ideal) == (8, 2)
    # inactive lanes cost nothing
    assert request_cost([None] * 31 + [4], "store", 16, "inc", 1).wavefronts == 1


# --- random specs ------------------------------------------------------------------------

BY_SIZE = {
    1: ["int8", "uint8", "char", "unsigned char"],
    2: ["float16", "bfloat16", "int16", "uint16", "half"],
    4: ["float32", "int32", "uint32", "half2", "float", "unsigned"],
    8: ["float64", "int64", "uint64", "float2", "int2", "uint2", "double"],
    16: ["float4", "int4", "uint4", "double2"],
}
TMA = {"32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3)}
# the built-ins are unsigned: cast to int, so the random expressions stay signed and their
# values small (unsigned wraparound has its own tests against gcc, test_expr_c.py)
THREAD_LEAVES = [f"(int){n}" for n in ("threadIdx.x", "threadIdx.y", "threadIdx.z", "tid", "lane")]
UNIFORM_LEAVES = [f"(int){n}" for n in ("warp", "blockDim.x", "blockDim.y", "blockDim.z")]


@st.composite
def expression(draw: st.DrawFn, leaves: list[str], depth: int = 3) -> str:
    """A C expression over ``leaves`` that never faults and stays far from overflow."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(leaves))
        return str(draw(st.integers(-8, 40)))

    def sub() -> str:
        return draw(expression(leaves, depth - 1))

    form = draw(st.integers(0, 15))
    if form == 0:
        return f"({sub()}) {draw(st.sampled_from(['+', '-', '&', '|', '^']))} ({sub()})"
    if form == 1:
        return f"({sub()}) * {draw(st.integers(-4, 8))}"
    if form == 2:
        op = draw(st.sampled_from(["/", "%"]))
        return f"({sub()}) {op} {draw(st.sampled_from([-5, -3, -2, 1, 2, 3, 4, 7, 8, 32]))}"
    if form == 3:
        return f"({sub()}) {draw(st.sampled_from(['<<', '>>']))} {draw(st.integers(0, 3))}"
    if form == 4:
        return f"({sub()}) >> (({sub()}) & 3)"
    if form == 5:
        return f"{draw(st.sampled_from(['-', '~', '!']))}({sub()})"
    if form == 6:
        return f"({sub()}) {draw(st.sampled_from(['<', '<=', '>', '>=', '==', '!=']))} ({sub()})"
    if form == 7:
        return f"({sub()}) {draw(st.sampled_from(['&&', '||']))} ({sub()})"
    if form == 8:
        return f"({sub()}) ? ({sub()}) : ({sub()})"
    if form == 9:
        return f"{draw(st.sampled_from(['min', 'max']))}({sub()}, {sub()})"
    if form == 10:
        return f"abs({sub()})"
    if form == 11:  # a division guarded by a conditional: only the selected side may run
        g = sub()
        return f"(({g}) != 0 ? ({sub()}) / ({g}) : ({sub()}))"
    if form == 12:
        g = sub()
        return f"(({g}) == 0 || ({sub()}) % ({g}) == 1)"
    if form == 13:
        g = sub()
        return f"(({g}) != 0 && ({sub()}) / ({g}) > 2)"
    if form == 14:  # a division by a positive expression
        return f"({sub()}) / (abs({sub()}) % 5 + 1)"
    return f"({sub()}) + ({sub()})"


@st.composite
def nonnegative(draw: st.DrawFn, leaves: list[str]) -> str:
    """A non-negative expression: random, or a lane pattern (strides, pairs, broadcasts)."""
    if draw(st.integers(0, 2)) == 0:

        def term(leaf: str) -> str:  # loop variables may be negative
            return leaf if leaf in THREAD_LEAVES + UNIFORM_LEAVES else f"abs({leaf})"

        terms = [
            f"{draw(st.integers(0, 9))} * ({term(leaf)} >> {draw(st.integers(0, 3))})"
            for leaf in leaves[:2]
        ]
        picked = draw(st.lists(st.sampled_from(leaves), max_size=2))
        terms += [f"{draw(st.integers(0, 5))} * {term(leaf)}" for leaf in picked]
        return " + ".join(terms) + f" + {draw(st.integers(0, 7))}"
    return f"abs({draw(expression(leaves))})"


@st.composite
def index_expr(draw: st.DrawFn, leaves: list[str], size: int) -> str | int:
    """An index that stays in 0..size-1 by construction."""
    form = draw(st.integers(0, 4))
    if form == 0:
        return draw(st.integers(0, size - 1))
    if form == 1:
        return f"(({draw(expression(leaves))}) % {size} + {size}) % {size}"
    if form == 2:
        return f"min(max({draw(expression(leaves))}, 0), {size - 1})"
    return f"({draw(nonnegative(leaves))}) % {size}"


def split_block(draw: st.DrawFn, threads: int) -> list[int]:
    """A 1-3 D block of exactly ``threads`` threads."""
    divisors = [d for d in range(1, threads + 1) if threads % d == 0]
    x = draw(st.sampled_from(divisors))
    rest = threads // x
    y = draw(st.sampled_from([d for d in divisors if rest % d == 0]))
    z = rest // y
    dims = [x, y, z]
    if z > 64:
        dims = [x, rest, 1]
    while len(dims) > 1 and dims[-1] == 1 and draw(st.booleans()):
        dims.pop()
    return dims


@st.composite
def loops(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    budget = 8
    for var in draw(st.lists(st.sampled_from(["i", "j", "k"]), max_size=3, unique=True)):
        count = draw(st.integers(1, max(1, min(4, budget))))
        if budget // count < 1:
            break
        budget //= count
        if draw(st.booleans()):
            out[var] = draw(st.lists(st.integers(-4, 9), min_size=count, max_size=count))
        else:
            start = draw(st.integers(-3, 6))
            step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
            stop = start + step * (count - 1)
            out[var] = f"{start}..{stop}" + (f":{step}" if step != 1 or draw(st.booleans()) else "")
    return out


@st.composite
def swizzle(draw: st.DrawFn, esize: int, matrix: bool) -> tuple[Any, int]:
    """A swizzle setting valid for the element size, and its period in bytes."""
    low = max(esize.bit_length() - 1, 4 if matrix else 0)
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(st.sampled_from([None, "none"])), 1
    if choice == 1 and low <= 4:
        name = draw(st.sampled_from(sorted(TMA)))
        bits, base, shift = TMA[name]
        return name, 1 << (bits + base + shift)
    bits = draw(st.integers(0, 3))
    base = draw(st.integers(low if bits else 0, max(low, 4)))
    shift = draw(st.integers(max(1, bits), 6))
    return {"bits": bits, "base": base, "shift": shift}, 1 << (bits + base + shift)


@st.composite
def array(draw: st.DrawFn, esize: int, matrix: bool) -> tuple[dict[str, Any], list[int]]:
    """An array declaration and its padded shape (the valid index ranges)."""
    ndim = draw(st.integers(1, 3))
    limit = {1: 200, 2: 24, 3: 8}[ndim]
    shape = [draw(st.integers(1, limit)) for _ in range(ndim)]
    pad = draw(st.integers(0, 4))
    if matrix:  # ldmatrix rows: 8 halves wide, 16-byte aligned
        shape[-1] = 8 * draw(st.integers(1, 4))
        pad = 8 * draw(st.integers(0, 1))
    decl: dict[str, Any] = {"dtype": draw(st.sampled_from(BY_SIZE[esize])), "shape": shape}
    if pad or draw(st.booleans()):
        decl["pad"] = pad
    swz, period = draw(swizzle(esize, matrix))
    if swz is not None:
        decl["swizzle"] = swz
    if draw(st.booleans()):
        decl["offset"] = draw(st.integers(0, 3)) * max(esize, period, 16 if matrix else 1)
    padded = [*shape[:-1], shape[-1] + pad]
    return decl, padded


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    family = draw(st.sampled_from(["general", "general", "atomic", "matrix"]))
    esize = {"general": draw(st.sampled_from(sorted(BY_SIZE))), "atomic": 4, "matrix": 2}[family]
    matrix = family == "matrix"
    threads = 32 * draw(st.integers(1, 8)) if matrix else draw(st.integers(1, 256))
    params = {
        name: draw(st.integers(1, 16))
        for name in draw(st.lists(st.sampled_from(["P", "Q"]), unique=True))
    }
    target, padded = draw(array(esize, matrix))
    if family == "atomic":
        target["dtype"] = draw(st.sampled_from(["int32", "uint32", "int", "unsigned"]))
    arrays = {"a": target}
    if draw(st.booleans()):  # another array before or after moves the automatic offsets
        other, _ = draw(array(draw(st.sampled_from(sorted(BY_SIZE))), False))
        arrays = {"b": other, "a": target} if draw(st.booleans()) else {"a": target, "b": other}
    accesses = []
    for n in range(draw(st.integers(1, 2))):
        op = draw(
            st.sampled_from(
                {
                    "general": ["load", "store"],
                    "atomic": ["atomic", "load", "store"],
                    "matrix": ["ldmatrix", "stmatrix", "load", "store"],
                }[family]
            )
        )
        loop = draw(loops())
        uniform = UNIFORM_LEAVES + list(params) + list(loop)
        leaves = THREAD_LEAVES + uniform
        acc: dict[str, Any] = {"name": f"access {n}", "array": "a", "op": op}
        if op in ("ldmatrix", "stmatrix"):
            acc["matrices"] = draw(st.sampled_from([1, 2, 4]))
            if draw(st.booleans()):
                acc["trans"] = draw(st.booleans())
            rows = padded[-1] // 8
            index = [draw(index_expr(leaves, size)) for size in padded[:-1]]
            index.append(f"8 * (({draw(nonnegative(leaves))}) % {rows})")
            pred_leaves = uniform  # .sync.aligned: the predicate must be warp-uniform
        else:
            if op == "atomic":
                acc["atomic"] = draw(st.sampled_from(["inc", "add", "exch"]))
            pick = uniform if draw(st.integers(0, 4)) == 0 else leaves  # warp-uniform addresses too
            index = [draw(index_expr(pick, size)) for size in padded]
            pred_leaves = leaves
        acc["index"] = index
        if loop:
            acc["loop"] = loop
        when = draw(st.integers(0, 4))
        if when == 1:
            acc["when"] = draw(st.sampled_from([True, False, 0, 3]))
        elif when >= 2:
            acc["when"] = draw(expression(pred_leaves))
        accesses.append(acc)
    spec: dict[str, Any] = {
        "block": split_block(draw, threads),
        "arrays": arrays,
        "accesses": accesses,
    }
    if params:
        spec["params"] = params
    return spec


def totals(
    spec: dict[str, Any],
) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, int]]]:
    engine = [
        (a.requests, a.wavefronts, a.ideal_wavefronts, a.max_ways) for a in analyze(spec).accesses
    ]
    ref = [
        (r.requests, r.wavefronts, r.ideal, r.max_ways)
        for r in reference_analyze(spec_from_mapping(spec))
    ]
    return engine, ref


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_engine_matches_reference_on_random_specs(spec: dict[str, Any]) -> None:
    engine, ref = totals(spec)
    assert engine == ref
