"""Spec -> CUDA: one microbenchmark kernel per access, all in one program.

Each kernel runs as one thread block of the spec's shape and makes exactly the
access the spec describes, nothing else in shared memory:

* the byte address is computed in C as the engine computes it (array offset +
  swizzle(flat index * element size)) from a 1024-byte aligned base, and the
  access goes through a pointer of the array's own C type, so the compiler
  emits the instruction of that width (``LDS.128`` for float4, ...);
* index expressions are printed as C with every operation parenthesized and
  every name declared with the C type the spec gives it (``threadIdx``,
  ``blockDim``, ``tid``, ``lane``, ``warp``: ``unsigned``; loop variables ``int``;
  params their own type), every literal with the suffix of its type, so CUDA
  computes exactly what shmem computed; params are constants; loops are
  ``#pragma unroll 1`` loops with the spec's values (lists come from
  ``__constant__`` arrays, which are read through the constant cache, not the
  L1/shared-memory pipe);
* an empty ``asm volatile`` with a memory clobber starts every iteration, so
  the compiler can neither hoist, merge nor drop an access;
* loads fold every component into a register that is written to global memory
  once, after a ``__syncthreads()`` that follows the measured loop: no global
  traffic runs beside the measured instruction and the load keeps its width;
* stores write a lane-dependent value; atomics are ``atomicAdd(p, 1)``
  (``inc``), ``atomicAdd(p, tid + 1)`` (``add``) and ``atomicExch`` (``exch``);
  ldmatrix/stmatrix are inline PTX on the lane's row address.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..analysis.analyze import access_kind, analyze_access
from ..hardware import ops
from ..hardware.arch import PROFILES
from ..hardware.dtypes import DType
from ..hardware.swizzle import cute_pieces
from ..model import AccessResult
from ..plumbing.frozen import frozen
from ..spec.compile import AccessDecl, Loop, SpecFile
from ..spec.expr import CType, Expr
from ..spec.layout import Layout, resolve
from . import sass_check

ALIGN = 1024
#: one result word per thread of the largest block any profile allows
SINK_WORDS = max(p.max_threads for p in PROFILES.values())
PROBE_KERNEL = "shm_probe_smem_base"


@frozen
class Target:
    """One access to measure: its kernel, the instruction it must compile to, the prediction."""

    kernel: str
    spec: SpecFile
    layout: Layout
    access: AccessDecl
    expected: sass_check.Expected
    predicted: AccessResult

    @property
    def op(self) -> str:
        return self.access.op


def plan(specs: Iterable[SpecFile]) -> list[Target]:
    """A target per access of every spec, with the engine's prediction.

    Raises :class:`~shmem_cli.plumbing.errors.ShmemError` for a spec that cannot be resolved.
    """
    targets: list[Target] = []
    used: set[str] = set()
    for spec in specs:
        targets += plan_spec(spec, used)
    return targets


def plan_spec(spec: SpecFile, used: set[str]) -> list[Target]:
    """The targets of one spec; ``used`` holds the kernel names taken so far (and is updated)."""
    targets: list[Target] = []
    layout = resolve(spec)
    for i, acc in enumerate(spec.accesses):
        kind = access_kind(spec, layout, acc)
        expected = sass_check.expected_instruction(
            acc.op, kind.size, atomic=acc.atomic, matrices=acc.matrices, trans=acc.trans
        )
        predicted = analyze_access(spec, layout, acc, detail=False)
        name = kernel_name(spec, i, acc)
        base, n = name, 2
        while name in used:
            name = f"{base}_{n}"
            n += 1
        used.add(name)
        targets.append(Target(name, spec, layout, acc, expected, predicted))
    return targets


def _slug(text: str, limit: int) -> str:
    return (
        re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]", "_", text)).strip("_").lower()[:limit].strip("_")
    )


def kernel_name(spec: SpecFile, index: int, access: AccessDecl) -> str:
    """A C identifier from the spec file's name, the access's position and its name."""
    stem = spec.path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"v_{_slug(stem, 32) or 'spec'}_{index:02d}_{_slug(access.name, 40) or 'access'}"


# --- expressions ------------------------------------------------------------------------


def c_expr(expr: Expr, names: Mapping[str, str]) -> str:
    """An expression as C with the same types: every operation in parentheses, literals
    with the suffix of their type, ``min``/``max``/``abs`` as the helper of their type
    (:func:`helper_functions`) with the arguments cast to it. Iterative: the tree may be
    thousands of nodes deep."""
    done: dict[int, str] = {}
    stack = [(expr.root, False)]
    while stack:
        node, expanded = stack.pop()
        if not expanded and node.args:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args)
            continue
        args = [done.pop(id(a)) for a in node.args]
        kind, op = node.kind, node.op
        t = node.optype or node.ctype
        assert t is not None
        if kind == "num":
            text = c_literal(node.value, t)
        elif kind == "name":
            text = names[op]
        elif kind == "cast":
            text = f"(({t.spelling}){args[0]})"
        elif kind == "unop":
            text = f"({op}{args[0]})"
        elif kind == "binop":
            text = f"({args[0]} {op} {args[1]})"
        elif kind == "ternary":
            text = f"({args[0]} ? {args[1]} : {args[2]})"
        elif kind == "call":
            cast = ", ".join(f"({t.spelling}){a}" for a in args)
            text = f"shm_{op}_{_SUFFIX[t]}({cast})"
        else:
            raise ValueError(f"cannot print expression node {kind!r}")
        done[id(node)] = text
    return done[id(expr.root)]


_SUFFIX = {CType.INT: "i", CType.UINT: "u", CType.LLONG: "ll", CType.ULLONG: "ull"}


def c_literal(value: int, ctype: CType) -> str:
    """``value`` as a C literal of type ``ctype`` (parenthesized when negative)."""
    if value >= 0:
        return f"{value}{ctype.suffix}"
    if value == ctype.min:  # -2147483648 would be -(2147483648), a long long
        return f"({value + 1}{ctype.suffix} - 1)"
    return f"({value}{ctype.suffix})"


def _literal(value: int) -> str:
    return c_literal(value, CType.LLONG)


def helper_functions(qualifier: str) -> str:
    """C definitions of ``shm_min_T``, ``shm_max_T`` and ``shm_abs_T`` for every type T."""
    out = []
    for t, sfx in _SUFFIX.items():
        c = t.spelling
        out.append(f"{qualifier} {c} shm_min_{sfx}({c} a, {c} b) {{ return a < b ? a : b; }}")
        out.append(f"{qualifier} {c} shm_max_{sfx}({c} a, {c} b) {{ return a > b ? a : b; }}")
        if t.signed:
            out.append(f"{qualifier} {c} shm_abs_{sfx}({c} a) {{ return a < 0 ? -a : a; }}")
    return "\n".join(out)


def constant_name(kernel: str, depth: int) -> str:
    """The ``__constant__`` array of the values of loop ``depth`` of ``kernel``: ``k_...``,
    while kernels are ``v_...``, and the depth after the last ``_`` keeps it unique."""
    return f"k{kernel[1:]}_{depth}"


def names_for(target: Target) -> dict[str, str]:
    """The C spelling of every name an expression of ``target``'s access may use."""
    x, y, z = target.layout.block
    names = {
        "threadIdx.x": "b_tx",
        "threadIdx.y": "b_ty",
        "threadIdx.z": "b_tz",
        "blockDim.x": c_literal(x, CType.UINT),
        "blockDim.y": c_literal(y, CType.UINT),
        "blockDim.z": c_literal(z, CType.UINT),
        "tid": "b_tid",
        "lane": "b_lane",
        "warp": "b_warp",
    }
    types = target.spec.param_types
    names.update(
        {p: c_literal(v, types.get(p, CType.INT)) for p, v in target.layout.params.items()}
    )
    names.update({lp.var: f"u_{lp.var}" for lp in target.access.loops})
    return names


# --- values by dtype ----------------------------------------------------------------------

_FOLD: dict[str, str] = {
    "float16": "(unsigned)__half_as_ushort({v})",
    "bfloat16": "(unsigned)__bfloat16_as_ushort({v})",
    "float32": "__float_as_uint({v})",
    "half2": "((unsigned)__half_as_ushort({v}.x) + (unsigned)__half_as_ushort({v}.y))",
    "int64": "shm_fold64((unsigned long long)({v}))",
    "uint64": "shm_fold64({v})",
    "float64": "shm_fold64((unsigned long long)__double_as_longlong({v}))",
    "float2": "(__float_as_uint({v}.x) + __float_as_uint({v}.y))",
    "int2": "((unsigned)({v}.x) + (unsigned)({v}.y))",
    "uint2": "({v}.x + {v}.y)",
    "float4": "(__float_as_uint({v}.x) + __float_as_uint({v}.y) + __float_as_uint({v}.z) + "
    "__float_as_uint({v}.w))",
    "int4": "((unsigned)({v}.x) + (unsigned)({v}.y) + (unsigned)({v}.z) + (unsigned)({v}.w))",
    "uint4": "({v}.x + {v}.y + {v}.z + {v}.w)",
    "double2": "(shm_fold64((unsigned long long)__double_as_longlong({v}.x)) + "
    "shm_fold64((unsigned long long)__double_as_longlong({v}.y)))",
}

_VALUE: dict[str, str] = {
    "float16": "__ushort_as_half((unsigned short)(s + 1u))",
    "bfloat16": "__ushort_as_bfloat16((unsigned short)(s + 1u))",
    "float32": "(float)(s + 1u)",
    "half2": "__halves2half2(__ushort_as_half((unsigned short)s), "
    "__ushort_as_half((unsigned short)(s + 1u)))",
    "float64": "(double)(s + 1u)",
    "float2": "make_float2((float)s, (float)(s + 1u))",
    "int2": "make_int2((int)s, (int)(s + 1u))",
    "uint2": "make_uint2(s, s + 1u)",
    "float4": "make_float4((float)s, (float)(s + 1u), (float)(s + 2u), (float)(s + 3u))",
    "int4": "make_int4((int)s, (int)(s + 1u), (int)(s + 2u), (int)(s + 3u))",
    "uint4": "make_uint4(s, s + 1u, s + 2u, s + 3u)",
    "double2": "make_double2((double)s, (double)(s + 1u))",
}


def fold(dtype: DType, var: str) -> str:
    """C that folds every byte of a loaded value into an ``unsigned`` (keeps all of it used)."""
    return _FOLD.get(dtype.name, "(unsigned)({v})").format(v=var)


def store_value(dtype: DType) -> str:
    """A lane-dependent value of the array's type, from ``unsigned s`` (the thread id)."""
    return _VALUE.get(dtype.name, f"({dtype.c_type})(s + 1u)")


# --- one kernel -----------------------------------------------------------------------------


def address_lines(target: Target, names: Mapping[str, str]) -> list[str]:
    """C statements that leave the lane's shared-memory byte address in ``e_addr``."""
    arr = target.layout.arrays[target.access.array]
    terms = [
        f"(long long){c_expr(loc.expr, names)} * {_literal(stride)}"
        for loc, stride in zip(target.access.index, arr.strides, strict=True)
    ]
    lines = [
        f"const long long e_flat = {' + '.join(terms)};",
        f"long long e_off = e_flat * {arr.esize}LL;",
    ]
    swz = arr.swizzle
    if swz is not None:
        xors = "".join(
            f" ^ ((e_off >> {shift}) & {((1 << bits) - 1) << base}LL)"
            for bits, base, shift in cute_pieces(swz)
        )
        lines.append(f"e_off = e_off{xors};  // {swz.label}")
    lines.append(f"const long long e_addr = {arr.offset}LL + e_off;")
    return lines


def _matrix_asm(target: Target) -> list[str]:
    acc = target.access
    m = acc.matrices
    trans = ".trans" if acc.trans else ""
    shape = f"m8n8.x{m}{trans}.shared.b16"
    lines = ["const unsigned a = (unsigned)__cvta_generic_to_shared(p);"]
    if ops.get(acc.op).verb == "reads":  # ldmatrix
        regs = ", ".join(f"%{k}" for k in range(m))
        outs = ", ".join(f'"=r"(r{k})' for k in range(m))
        lines.append(f"unsigned {', '.join(f'r{k}' for k in range(m))};")
        lines.append(
            f'asm volatile("ldmatrix.sync.aligned.{shape} {{{regs}}}, [%{m}];" : {outs} : "r"(a));'
        )
        lines.append(f"acc += {' + '.join(f'r{k}' for k in range(m))};")
    else:
        regs = ", ".join(f"%{k + 1}" for k in range(m))
        ins = ", ".join(f'"r"(s * 4u + {k}u)' for k in range(m))
        lines.append(
            f'asm volatile("stmatrix.sync.aligned.{shape} [%0], {{{regs}}};" :: "r"(a), {ins} '
            ': "memory");'
        )
    return lines


def _action(target: Target) -> list[str]:
    acc = target.access
    dt = target.layout.arrays[acc.array].decl.dtype
    op = ops.get(acc.op)
    if op.matrix:
        return _matrix_asm(target)
    if op.atomic:
        return _atomic(acc.atomic, dt)
    if op.verb == "reads":
        return [f"const {dt.c_type} v = *p;", f"acc += {fold(dt, 'v')};"]
    return [f"*p = {store_value(dt)};"]


def _atomic(atomic: str, dt: DType) -> list[str]:
    """The CUDA call of a spec's atomic on ``p`` (an element of ``dt``): ``atomicAdd`` for inc
    and add, ``atomicExch`` and ``atomicCAS``; an 8-byte one on ``unsigned long long``, the
    only 8-byte type CUDA's atomicExch and atomicCAS take."""
    if atomic in ("inc", "add"):
        one = "1u" if dt.c_type.startswith("unsigned") else "1"
        return [f"atomicAdd(p, {one if atomic == 'inc' else f'({dt.c_type})(s + 1u)'});"]
    ptr, value = "p", store_value(dt)
    if dt.size == 8:
        ptr, value = "(unsigned long long *)p", "(unsigned long long)(s + 1u)"
    if atomic == "exch":
        return [f"atomicExch({ptr}, {value});"]
    return [f"atomicCAS({ptr}, {value}, {value});"]  # it costs the same, swapping or not


def loop_head(kernel: str, lp: Loop, depth: int) -> list[str]:
    """The ``for`` line of one loop (``#pragma unroll 1``) and its variable ``u_<var>``."""
    i = f"i_{depth}"
    t = lp.ctype.spelling
    head = ["#pragma unroll 1", f"for (long long {i} = 0; {i} < {lp.count}LL; ++{i}) {{"]
    if lp.values is not None:
        head.append(f"  const {t} u_{lp.var} = {constant_name(kernel, depth)}[{i}];")
    else:
        head.append(
            f"  const {t} u_{lp.var} = ({t})({_literal(lp.start)} + {_literal(lp.step)} * {i});"
        )
    return head


def _comment(text: str) -> str:
    """Text safe for a ``//`` comment: one line, no trailing backslash that would continue it."""
    return " ".join(text.replace("\\", "/").split())


def kernel_source(target: Target) -> str:
    """The ``extern "C"`` kernel that makes ``target``'s access."""
    acc = target.access
    names = names_for(target)
    x, y, z = target.layout.block
    ws = target.spec.arch.warp_size  # lanes of a warp: the spec's architecture profile's
    reads = ops.get(acc.op).verb == "reads"
    predicted = target.predicted.cost
    out: list[str] = [
        f"// {_comment(target.spec.path)}: {_comment(acc.name)}",
        f"// {acc.op} -> {target.expected.label}; predicted {predicted.requests} requests, "
        f"{predicted.wavefronts} wavefronts",
    ]
    for depth, lp in enumerate(acc.loops):
        if lp.values is not None:
            vals = ", ".join(c_literal(v, lp.ctype) for v in lp.values)
            name = constant_name(target.kernel, depth)
            out.append(f"__constant__ {lp.ctype.spelling} {name}[{len(lp.values)}] = {{{vals}}};")
    out += [
        f'extern "C" __global__ void __launch_bounds__({x * y * z}) {target.kernel}('
        "unsigned* __restrict__ sink) {",
        "  unsigned char* const smem = shm_base();",
        "  const unsigned b_tx = threadIdx.x, b_ty = threadIdx.y, b_tz = threadIdx.z;",
        f"  const unsigned b_tid = b_tx + {x}u * (b_ty + {y}u * b_tz);",
        f"  const unsigned b_lane = b_tid % {ws}u, b_warp = b_tid / {ws}u;",
        "  const unsigned s = b_tid;",
        "  (void)b_lane; (void)b_warp; (void)s; (void)sink;",
    ]
    if reads:
        out.append("  unsigned acc = 0u;")
    indent = "  "
    for depth, lp in enumerate(acc.loops):
        out += [indent + line for line in loop_head(target.kernel, lp, depth)]
        indent += "  "
    out.append(indent + 'asm volatile("" ::: "memory");  // no hoisting, merging or dropping')
    when = f"({c_expr(acc.when.expr, names)}) != 0" if acc.when is not None else "true"
    out.append(f"{indent}if ({when}) {{")
    ctype = target.layout.arrays[acc.array].decl.dtype.c_type
    body = address_lines(target, names)
    body.append(f"{ctype}* const p = reinterpret_cast<{ctype}*>(smem + e_addr);")
    body += _action(target)
    out += [indent + "  " + line for line in body]
    out.append(indent + "}")
    for _ in acc.loops:
        indent = indent[:-2]
        out.append(indent + "}")
    if reads:
        out += ["  __syncthreads();  // the measured region ends here", "  sink[b_tid] = acc;"]
    out.append("}")
    return "\n".join(out) + "\n"
