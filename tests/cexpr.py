"""shmem's expressions against a real C compiler (``g++``): the helpers.

Random expressions over every C type shmem models, every literal form (decimal,
hex, octal, binary; every suffix), casts, every operator and ``min``/``max``/``abs``
are evaluated by shmem (vectorized over several environments, and exactly per
environment through the scalar path) and by one compiled C++ program that prints
each value with the name of its type. Expressions whose evaluation is undefined in
C (signed overflow, shift counts past the width, division by zero) must be refused
by shmem and by the independent reference evaluator (tests/reference.py); the C
program is built with ``-fsanitize=undefined`` so it also proves that no accepted
expression is undefined, and the operation shmem refused (overflow or a shift; a
division by zero would stop the program) is run through the sanitizer, which must
report it.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.expr import CType, EvalFault, Expr, compile_expr
from shmem_cli.verify.codegen import c_expr, helper_functions

from .reference import RefFault, evaluate

GXX = shutil.which("g++")

# the names, their C types, and the values each takes in the environments
NAMES = {
    "tx": CType.UINT,
    "n": CType.UINT,
    "a": CType.INT,
    "b": CType.INT,
    "L": CType.LLONG,
    "U": CType.ULLONG,
}
VALUES = {
    "tx": [0, 1, 5, 31, 33, 1023],
    "n": [0, 3, 8, 65536, 2147483648, 4294967295],
    "a": [0, -1, 7, -100, 2147483647, -2147483648],
    "b": [1, 2, -3, 0, 31, 46341],
    "L": [0, -3, 1 << 40, -(1 << 40), 9223372036854775807, -9223372036854775808],
    "U": [0, 5, 1 << 63, 18446744073709551615, 4294967296, 123],
}
ENVS = len(VALUES["tx"])
LITERALS = [
    "0", "1", "2", "3", "7", "31", "32", "63", "64", "100000",
    "2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
    "0x7FFFFFFF", "0x80000000", "0xFFFFFFFF", "0x100000000", "0xFFFFFFFFFFFFFFFF",
    "0x7fffffffffffffff", "017", "0b101", "1u", "2U", "5l", "6L", "7ll", "8LL",
    "9ul", "10UL", "11lu", "12ull", "13ULL", "14llu", "15uLL", "0xFFu", "4294967295u",
]  # fmt: skip
CASTS = [
    "int", "unsigned", "unsigned int", "long", "long long", "unsigned long long",
    "signed", "long unsigned", "size_t", "int64_t", "uint32_t",
]  # fmt: skip
BINARY = [
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
]
UNARY = ["-", "~", "!", "+"]


def random_expression(rng: random.Random, depth: int = 4) -> str:
    """One expression; the shape is random, the operands are small often enough that many
    results are defined."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.5:
            return rng.choice(list(NAMES))
        return rng.choice(LITERALS)
    form = rng.random()
    sub = lambda: random_expression(rng, depth - 1)  # noqa: E731
    if form < 0.45:
        op = rng.choice(BINARY)
        if op in ("<<", ">>") and rng.random() < 0.7:
            return f"({sub()}) {op} {rng.randrange(0, 34)}"
        if op in ("/", "%") and rng.random() < 0.5:
            return f"({sub()}) {op} {rng.choice(['3', '-2', '7u', '32', '5ll'])}"
        return f"({sub()}) {op} ({sub()})"
    if form < 0.6:
        return f"{rng.choice(UNARY)}({sub()})"
    if form < 0.75:
        return f"({rng.choice(CASTS)})({sub()})"
    if form < 0.85:
        return f"({sub()}) ? ({sub()}) : ({sub()})"
    if form < 0.95:
        return f"{rng.choice(['min', 'max'])}({sub()}, {sub()})"
    return f"abs(({rng.choice(['int', 'long long'])})({sub()}))"


@dataclass
class Checked:
    """What shmem made of a batch of expressions."""

    values: dict[tuple[int, int], tuple[str, int]] = field(default_factory=dict)
    refused: int = 0  # (expression, environment) pairs refused as undefined
    # refused pairs whose C operation does not trap on x86 (overflow, shifts), with the C of
    # the operation at fault: g++'s sanitizer must find it undefined too (a division by
    # zero would kill the program; the whole expression may let g++ fold the fault away,
    # as in ``-x ? a : b``, which it reads as ``x ? a : b``)
    trappable: list[tuple[int, int]] = field(default_factory=list)
    faulting: dict[tuple[int, int], str] = field(default_factory=dict)
    rejected: int = 0  # expressions refused at compile time (abs of an unsigned value)
    compared: int = 0  # (expression, environment) pairs compared with C


def _tag(t: CType) -> str:
    return {CType.INT: "i", CType.UINT: "u", CType.LLONG: "ll", CType.ULLONG: "ull"}[t]


def env_scalar(j: int) -> dict[str, int]:
    return {name: VALUES[name][j] for name in NAMES}


def env_vector() -> dict[str, object]:
    """Every name as an int64 array over the environments; unsigned long long values of
    2^63 and more as their two's-complement bit pattern."""
    return {
        k: np.array([x - (1 << 64) if x >= 1 << 63 else x for x in v], dtype=np.int64)
        for k, v in VALUES.items()
    }


def shmem_values(texts: list[str]) -> Checked:
    """Evaluate every expression in every environment, exactly (scalar path) and vectorized;
    both paths and the reference evaluator must agree on every value and every refusal."""
    out = Checked()
    vector = env_vector()
    for i, text in enumerate(texts):
        try:
            expr = compile_expr(text, NAMES)
        except ShmemError:
            out.rejected += 1
            continue
        t = expr.ctype
        try:
            value = expr.evaluate(vector)  # type: ignore[arg-type]
            got = np.broadcast_to(np.asarray(value), (ENVS,))
            vector_fault = None
        except EvalFault as fault:
            got, vector_fault = None, np.broadcast_to(np.asarray(fault.where), (ENVS,))
        for j in range(ENVS):
            env = env_scalar(j)
            try:
                exact = expr.constant(env)
            except EvalFault as fault:
                exact = None
                if "by zero" not in fault.message and fault.node.op not in ("/", "%"):
                    out.trappable.append((i, j))
                    sub = Expr("", fault.node)
                    out.faulting[(i, j)] = c_expr(sub, {n: n for n in NAMES})
            try:
                ref: int | None = evaluate(expr, env)
            except RefFault:
                ref = None
            assert exact == ref, (text, env, exact, ref)
            if exact is None:
                out.refused += 1
                # the vectorized walk stops at its first fault, so only a fault is required
                assert vector_fault is not None, (text, env)
                continue
            if got is not None:  # (else the vectorized walk stopped at another env's fault)
                want = exact if t is not CType.ULLONG or exact < 1 << 63 else (1 << 63) - 1
                assert int(got[j]) == want, (text, env, int(got[j]), exact)
            out.values[(i, j)] = (_tag(t), exact)
    out.compared = len(out.values)
    return out


PROGRAM_HEAD = r"""
#include <cstdio>
#include <cstddef>
#include <cstdint>
static void P(int v) { std::printf("i %d\n", v); }
static void P(unsigned v) { std::printf("u %u\n", v); }
static void P(long v) { std::printf("ll %ld\n", v); }
static void P(unsigned long v) { std::printf("ull %lu\n", v); }
static void P(long long v) { std::printf("ll %lld\n", v); }
static void P(unsigned long long v) { std::printf("ull %llu\n", v); }
template <class A, class B> static auto min(A a, B b) -> decltype(a + b) {
  using T = decltype(a + b); return (T)a < (T)b ? (T)a : (T)b; }
template <class A, class B> static auto max(A a, B b) -> decltype(a + b) {
  using T = decltype(a + b); return (T)a > (T)b ? (T)a : (T)b; }
#define abs_(x) ([&] { auto a_ = (x); return a_ < 0 ? -a_ : a_; }())
"""


def c_text(text: str) -> str:
    """An expression as C++: ``abs`` is a macro (the library's ``abs(int)`` would hide an
    overflow from the sanitizer, and one function would be checked at one place only: the
    sanitizer reports each place once)."""
    return re.sub(r"\b(?:abs|shm_abs_ll|shm_abs_i)\(", "abs_(", text)


def c_program(texts: list[str], pairs: list[tuple[int, int]]) -> str:
    """One C++ function per environment: the expressions, in order, over volatile inputs."""
    lines = [PROGRAM_HEAD]
    by_env: dict[int, list[int]] = {}
    for i, j in pairs:
        by_env.setdefault(j, []).append(i)
    for j, exprs in sorted(by_env.items()):
        env = env_scalar(j)
        lines.append(f"static void env{j}() {{")
        for name, t in NAMES.items():
            lines.append(f"  volatile {t.spelling} v_{name} = {env[name]}{t.suffix};")
            lines.append(f"  {t.spelling} {name} = v_{name};")
        lines += [f"  P({c_text(texts[i])});" for i in exprs]
        lines.append("}")
    lines.append("int main() {")
    lines += [f"  env{j}();" for j in sorted(by_env)]
    lines.append("  return 0;\n}")
    return "\n".join(lines) + "\n"


def c_values(texts: list[str], pairs: list[tuple[int, int]], folder: Path) -> list[tuple[str, int]]:
    """What the compiled C++ prints for each (expression, environment) pair, in order."""
    assert GXX is not None
    src = folder / "exprs.cpp"
    src.write_text(c_program(texts, pairs))
    exe = folder / "exprs"
    flags = ["-std=c++20", "-O0", "-w", "-fsanitize=undefined", "-fno-sanitize-recover=all"]
    subprocess.run([GXX, *flags, "-o", str(exe), str(src)], check=True, timeout=600)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and "runtime error" not in run.stderr, run.stderr[-2000:]
    out = []
    for line in run.stdout.splitlines():
        tag, value = line.split()
        out.append((tag, int(value)))
    return out


_LITERAL = re.compile(r"\b(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]*\b")


def c_undefined(texts: list[str], pairs: list[tuple[int, int]], folder: Path) -> list[bool]:
    """Whether g++'s undefined-behaviour sanitizer reports each (C text, environment)."""
    # Every literal is read through a volatile (keeping its type), so the compiler folds
    # nothing and checks every operation at run time.
    assert GXX is not None
    volatile = [_LITERAL.sub(lambda m: f"V({m.group()})", c_text(t)) for t in texts]
    lines = [
        PROGRAM_HEAD,
        "#include <csetjmp>",
        "#include <csignal>",
        "template <class T> static T V(T x) { volatile T y = x; return y; }",
        # a wrapped value may divide by zero later in the same expression: skip to the next
        "static sigjmp_buf jump;",
        "static void on_fpe(int) { siglongjmp(jump, 1); }",
        helper_functions("static inline"),
    ]
    for n, (i, j) in enumerate(pairs):
        env = env_scalar(j)
        lines.append(f"static void case{n}() {{")
        for name, t in NAMES.items():
            lines.append(f"  volatile {t.spelling} v_{name} = {env[name]}{t.suffix};")
            lines.append(f"  {t.spelling} {name} = v_{name};")
        lines += [f'  std::fprintf(stderr, "@{n}\\n");', f"  P({volatile[i]});", "}"]
    lines.append("int main() {\n  std::signal(SIGFPE, on_fpe);")
    lines += [f"  if (!sigsetjmp(jump, 1)) case{n}();" for n in range(len(pairs))]
    lines.append("  return 0;\n}")
    src = folder / "undefined.cpp"
    src.write_text("\n".join(lines) + "\n")
    exe = folder / "undefined"
    flags = ["-std=c++20", "-O0", "-w", "-fsanitize=undefined", "-fsanitize-recover=all"]
    subprocess.run([GXX, *flags, "-o", str(exe), str(src)], check=True, timeout=600)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    reported = [False] * len(pairs)
    case = -1
    for line in run.stderr.splitlines():
        if line.startswith("@"):
            case = int(line[1:])
        elif "runtime error" in line and case >= 0:
            reported[case] = True
    return reported


def compare(count: int, seed: int, folder: Path) -> Checked:
    """``count`` random expressions through shmem and g++; asserts they agree everywhere."""
    rng = random.Random(seed)
    texts = [random_expression(rng) for _ in range(count)]
    checked = shmem_values(texts)
    pairs = sorted(checked.values, key=lambda p: (p[1], p[0]))
    got = c_values(texts, pairs, folder)
    assert len(got) == len(pairs)
    for (i, j), c in zip(pairs, got, strict=True):
        assert checked.values[(i, j)] == c, (texts[i], env_scalar(j), checked.values[(i, j)], c)
    if checked.trappable:
        faulting = [checked.faulting[p] for p in checked.trappable]
        reported = c_undefined(
            faulting, [(n, j) for n, (_, j) in enumerate(checked.trappable)], folder
        )
        missed = [
            (texts[i], env_scalar(j))
            for (i, j), r in zip(checked.trappable, reported, strict=True)
            if not r
        ]
        assert not missed, missed[:5]
    return checked
