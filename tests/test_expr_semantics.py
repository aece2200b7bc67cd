"""CUDA's integer semantics in expressions, by hand (issue 13, items 1 and 3).

Every expected value here was worked out from the C standard's rules (and each kind
of case is also compared with g++ in test_expr_c.py): none comes from shmem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.compile import THREAD_NAMES
from shmem_cli.spec.expr import CType, EvalFault, compile_expr

NAMES = {**THREAD_NAMES, "tx": CType.UINT, "i": CType.INT, "L": CType.LLONG}


def value(text: str, **env: int) -> int:
    return compile_expr(text, NAMES).constant(env)


# the table of issue 13: CUDA's value for each
ISSUE_TABLE = [
    ("(threadIdx.x - 1) % 32", {"threadIdx.x": 0}, 31),
    ("(threadIdx.x - 1) / 2", {"threadIdx.x": 0}, 2147483647),
    ("threadIdx.x - 32 < 8", {"threadIdx.x": 0}, 0),
    ("1u - 2", {}, 4294967295),
    ("0x80000000 + 0x80000000", {}, 0),
    ("(tx * 100000 * 100000) % 1000", {"tx": 3}, 224),
]


@pytest.mark.parametrize("text,env,want", ISSUE_TABLE, ids=[t for t, _, _ in ISSUE_TABLE])
def test_issue_table_as_cuda_computes_it(text: str, env: dict[str, int], want: int) -> None:
    assert value(text, **env) == want
    # the vectorized path, over arrays, agrees
    arrays = {k: np.array([v, v], dtype=np.int64) for k, v in env.items()}
    got = compile_expr(text, NAMES).evaluate(arrays)
    assert list(np.broadcast_to(got, (2,))) == [want, want]


LITERAL_TYPES = [
    ("7", CType.INT),
    ("2147483647", CType.INT),
    ("2147483648", CType.LLONG),  # decimal: int, long, long long (never unsigned)
    ("0x7FFFFFFF", CType.INT),
    ("0x80000000", CType.UINT),  # hex: int, unsigned, long, unsigned long, ...
    ("0xFFFFFFFF", CType.UINT),
    ("0x100000000", CType.LLONG),
    ("0xFFFFFFFFFFFFFFFF", CType.ULLONG),
    ("017", CType.INT),
    ("037777777777", CType.UINT),  # octal follows the hex rule
    ("1u", CType.UINT),
    ("4294967296u", CType.ULLONG),
    ("1l", CType.LLONG),
    ("1LL", CType.LLONG),
    ("1uL", CType.ULLONG),
    ("1LU", CType.ULLONG),
    ("1ull", CType.ULLONG),
    ("1llU", CType.ULLONG),
    ("9223372036854775808u", CType.ULLONG),
]


@pytest.mark.parametrize("text,ctype", LITERAL_TYPES, ids=[t for t, _ in LITERAL_TYPES])
def test_literal_types_follow_c(text: str, ctype: CType) -> None:
    assert compile_expr(text).ctype is ctype


@pytest.mark.parametrize(
    "text", ["9223372036854775808", "18446744073709551616u", "1lL", "1uu", "1lll", "08"]
)
def test_literals_c_refuses_are_errors(text: str) -> None:
    with pytest.raises(ShmemError):
        compile_expr(text)


def test_conversions_and_mixed_signedness() -> None:
    assert value("threadIdx.x - 1LL", **{"threadIdx.x": 0}) == -1  # long long holds unsigned
    assert value("threadIdx.x - 1ULL", **{"threadIdx.x": 0}) == 2**64 - 1
    assert value("(int)threadIdx.x - 1", **{"threadIdx.x": 0}) == -1
    assert value("-1 < 0u") == 0  # -1 becomes 4294967295
    assert value("-1 < 0LL") == 1
    assert value("-1LL < 0u") == 1  # long long holds every unsigned value
    assert value("(unsigned)-1") == 4294967295
    assert value("(int)4294967295u") == -1
    assert value("(int)0x1FFFFFFFFLL") == -1  # keeps the low 32 bits
    assert value("(unsigned long long)-1") == 2**64 - 1
    assert value("(unsigned long)(int)-2") == 2**64 - 2
    assert value("(size_t)1 << 40") == 2**40
    assert value("~0u") == 4294967295
    assert value("-(0u + 1)") == 4294967295
    assert value("min(-1, 1u)") == 1  # min in the common type: unsigned
    assert value("max(-1, 1u)") == 4294967295
    assert value("lane > 3 ? -1 : 1u", lane=5) == 4294967295  # ?: in the common type
    assert value("3000000000u / 2 + 0") == 1500000000


def test_division_shifts_and_truncation() -> None:
    assert [value(t) for t in ("-7 / 2", "-7 % 2", "7 / -2", "7 % -2")] == [-3, -1, -3, 1]
    assert value("-7 >> 1") == -4  # arithmetic
    assert value("0x80000000 >> 31") == 1  # logical: the left operand is unsigned
    assert value("1 << 31") == -(2**31)  # into the sign bit, as CUDA (and C++20) do
    assert value("3u << 31") == 2**31
    assert value("1LL << 62") == 2**62
    assert value("0xFFFFFFFFFFFFFFFF >> 60") == 15
    assert value("(0xFFFFFFFFFFFFFFFF / 3) % 1000") == 6148914691236517205 % 1000


UNDEFINED = [
    ("2147483647 + 1", "signed integer overflow", "+"),
    ("-2147483647 - 2", "signed integer overflow", "- 2"),
    ("65536 * 65536", "signed integer overflow", "*"),
    ("-(-2147483647 - 1)", "signed integer overflow", "-("),
    ("(-2147483647 - 1) / -1", "signed integer overflow", "/"),
    ("(-2147483647 - 1) % -1", "signed integer overflow", "%"),
    ("abs(-2147483647 - 1)", "signed integer overflow", "abs"),
    ("9223372036854775807 + 1", "signed integer overflow", "+"),
    ("3037000500LL * 3037000500LL", "signed integer overflow", "*"),
    ("1 << 32", "shift count outside 0..31", "<<"),
    ("1 << 62", "shift count outside 0..31", "<<"),
    ("1LL << 64", "shift count outside 0..63", "<<"),
    ("1 >> -1", "shift count outside 0..31", ">>"),
    ("5 / 0", "division by zero", "/"),
    ("5u % 0u", "modulo by zero", "%"),
]


@pytest.mark.parametrize("text,message,at", UNDEFINED, ids=[t for t, _, _ in UNDEFINED])
def test_undefined_behaviour_is_a_fault_at_its_operator(text: str, message: str, at: str) -> None:
    with pytest.raises(EvalFault) as info:
        value(text)
    assert message in info.value.message
    assert text[info.value.node.col :].startswith(at)


def test_faults_only_where_live() -> None:
    e = compile_expr("lane < 4 ? 100 / ((int)lane - 4) : 2147483647 + (int)lane", NAMES)
    lane = np.arange(32, dtype=np.int64)
    with pytest.raises(EvalFault) as info:
        e.evaluate({"lane": lane})
    assert list(np.nonzero(np.broadcast_to(info.value.where, (32,)))[0]) == list(range(4, 32))
    ok = compile_expr("lane < 4 ? 100 / ((int)lane - 4) : 0", NAMES).evaluate({"lane": lane})
    assert list(np.broadcast_to(ok, (32,))[:4]) == [-25, -33, -50, -100]
    assert compile_expr("1 || 1 / 0").constant({}) == 1
    assert compile_expr("0 && 1 << 40").constant({}) == 0


def test_abs_of_an_unsigned_value_does_not_compile() -> None:
    with pytest.raises(ShmemError, match=r"abs\(\) of an unsigned value.*abs\(\(int\)\(x\)\)"):
        compile_expr("abs(lane - 16)", NAMES)
    assert value("abs((int)lane - 16)", lane=3) == 13


@pytest.mark.parametrize(
    "text", ["(short)lane", "(char)1", "(unsigned signed)1", "(long long long)1"]
)
def test_casts_that_are_not_modelled(text: str) -> None:
    with pytest.raises(ShmemError, match="int, unsigned, long"):
        compile_expr(text, NAMES)


# --- through the command line ------------------------------------------------------------

SPEC = """\
block: [64]
params: {P: 3}
arrays:
  a: {dtype: float32, shape: [64]}
accesses:
  - array: a
"""


def run(tmp_path: Path, text: str, *args: str) -> tuple[int, str, Path]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, [*(args or ("analyze",)), str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout + result.stderr, path


def test_a_when_with_unsigned_wraparound_runs_only_where_cuda_runs(tmp_path: Path) -> None:
    # issue 13: in CUDA only threads 32..39 run this; shmem counted 40 threads in 2 requests
    text = SPEC + '    index: ["lane"]\n    when: "threadIdx.x - 32 < 8"\n'
    code, out, _ = run(tmp_path, text, "analyze", "--format", "json")
    assert code == 0, out
    assert '"requests": 1' in out


def test_loop_bound_too_large_is_located(tmp_path: Path) -> None:
    # issue 13: an OverflowError traceback
    text = SPEC + '    index: ["lane"]\n    loop: {i: "(1<<62)*4..(1<<62)*4"}\n'
    code, out, path = run(tmp_path, text)
    assert code == 2
    assert f"{path}:8:18: error: loop range of 'i': shift count outside 0..31" in out
    code, out, path = run(tmp_path, text.replace("1<<62", "1LL<<62"))
    assert code == 2
    assert f"{path}:8:25: error: loop range of 'i': signed integer overflow" in out
    code, out, path = run(tmp_path, text.replace("(1<<62)*4", "(1LL<<32)"))
    assert code == 2
    assert "does not fit in the loop variable's type (int" in out
    assert "Traceback" not in out


def test_params_with_a_type(tmp_path: Path) -> None:
    text = SPEC.replace("{P: 3}", "{P: {value: 3, type: unsigned}}")
    code, out, _ = run(tmp_path, text + '    index: ["(P - 4) % 64"]\n')
    assert code == 0, out  # (3u - 4) % 64 = 4294967295 % 64 = 63
    code, out, path = run(tmp_path, text.replace("unsigned", "short") + "    index: [lane]\n")
    assert code == 2 and f"{path}:2:" in out
    code, out, path = run(tmp_path, SPEC.replace("3}", "3000000000}") + "    index: [lane]\n")
    assert code == 2
    assert f"{path}:2:13: error: param 'P' = 3000000000 does not fit in int" in out
    assert "type: long long" in out


def test_loop_variables_with_a_type(tmp_path: Path) -> None:
    # for (unsigned k = 0; k <= 3; ++k) ... a[(k - 1) % 64]: k - 1 wraps for k = 0
    text = SPEC + '    index: ["(k - 1) % 64"]\n    loop: {k: {values: "0..3", type: unsigned}}\n'
    code, out, _ = run(tmp_path, text, "analyze", "--format", "json")
    assert code == 0, out
    code, out, _ = run(tmp_path, text.replace("unsigned}", "int}"))
    assert code == 2 and "is -1 (negative" in out  # as int, k - 1 is -1
    listed = text.replace('"0..3"', "[0, 4294967295]")
    code, out, _ = run(tmp_path, listed, "verify", "--emit", str(tmp_path / "o"))
    assert code == 0, out
    source = (tmp_path / "o" / "shmem_verify.cu").read_text()
    assert "__constant__ unsigned k_s_00_a_0_0[2] = {0u, 4294967295u};" in source
    code, out, path = run(tmp_path, text.replace("unsigned}", "short}"))
    assert code == 2
    assert f"{path}:8:38: error: unknown type 'short': a param or loop variable is int" in out


DEEP = {
    "990 additions in an index": ("index", "lane" + "+0" * 990),
    "990 additions in a loop bound": ("loop", "0..P" + "+0" * 990),
    "900 unary minuses": ("index", "-" * 900 + "(int)lane & 63"),
    "580 nested ?:": ("index", "P>9?P:" * 580 + "lane"),
}


@pytest.mark.parametrize("slot,text", DEEP.values(), ids=DEEP.keys())
def test_deep_expressions_analyze_lint_and_emit(tmp_path: Path, slot: str, text: str) -> None:
    # issue 13: each raised RecursionError (analyze, lint, verify --emit)
    if slot == "index":
        spec = SPEC + f'    index: ["{text}"]\n'
    else:
        spec = SPEC + f'    index: [i]\n    loop: {{i: "{text}"}}\n'
    for args in (("analyze",), ("lint",), ("verify", "--emit", str(tmp_path / "out"))):
        code, out, _ = run(tmp_path, spec, *args)
        assert code == 0, (args, out[-2000:])
        assert "Traceback" not in out
    assert "shm" in (tmp_path / "out" / "shmem_verify.cu").read_text()


def test_a_masked_fault_leaves_a_value_that_fits() -> None:
    # found by make fuzz: -x of the smallest long long, in the branch of ?: that no element
    # takes, left a Python int of 2^63 that NumPy could not hold
    names = {"L": CType.LLONG, "a": CType.INT}
    for text in ("a > 0 ? 1 : -L", "a > 0 ? 1 : L - 1", "a > 0 ? 1 : abs(L)", "a < 0 && -L"):
        e = compile_expr(text, names)
        got = e.evaluate({"a": np.array([1, 2], dtype=np.int64), "L": -(2**63)})
        assert list(np.broadcast_to(got, (2,))) == ([0, 0] if "&&" in text else [1, 1]), text


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (-(1 << 62), 2),  # exactly LLONG_MIN
        ((1 << 63) - 1, 1),  # LLONG_MAX, which a float rounds up to 2^63
        (-(1 << 32), 1 << 31),  # LLONG_MIN again
        (1 << 62, 2),  # 2^63: overflow
        (-1, -(1 << 63)),  # -LLONG_MIN: overflow
        (3037000500, 3037000500),  # just past 2^63: overflow
        (3037000499, -3037000499),
    ],
)
def test_long_long_products_at_the_edge_over_arrays_as_one_value(a: int, b: int) -> None:
    # a product's overflow is decided exactly, over arrays as for one value (the array
    # path judged products near 2^63 through floats and refused some that fit)
    expr = compile_expr("a * b", {"a": CType.LLONG, "b": CType.LLONG})
    fits = -(1 << 63) <= a * b < (1 << 63)
    arrays = {"a": np.array([a, 1], dtype=np.int64), "b": np.array([b, 1], dtype=np.int64)}
    for env in ({"a": a, "b": b}, arrays):
        if fits:
            assert int(np.asarray(expr.evaluate(env)).reshape(-1)[0]) == a * b
        else:
            with pytest.raises(EvalFault, match="signed integer overflow"):
                expr.evaluate(env)
