"""A plain-Python reference model of shmem's analysis, for cross-checking the engine.

Written from the hardware rules in ``shmem_cli/hardware/arch.py``'s docstring, one thread and
one lane at a time, without NumPy and without ``shmem_cli.hardware.engine`` or
``shmem_cli.spec.space``. It is slow and meant to be obviously correct:

* every loop iteration (nested in the order written, the last loop innermost) and
  every thread of the block is visited; threads form warps by linear id
  ``x + y*X + z*X*Y``;
* the expressions are evaluated by the scalar tree-walker below, with C semantics
  on integers; a thread's byte address comes from the array layout's one address
  function, ``ArrayLayout(*index)`` (offset, padding and swizzle composed in);
* each warp-iteration with an active lane is one request; its lanes are split into
  phases, and a phase costs the most distinct 4-byte words any one bank must deliver.

The layout (block size, and per array the address function) comes from
``shmem_cli.spec.layout.resolve``; the parsed expressions (``Located.expr``) come from
``shmem_cli.spec.compile``. The bank/phase rule is written out here independently of
``shmem_cli.hardware.engine``: that is what this model checks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import product

from shmem_cli.hardware.arch import SM90
from shmem_cli.spec.compile import AccessDecl, Loop, SpecFile
from shmem_cli.spec.expr import CType, Expr, Node
from shmem_cli.spec.layout import ArrayLayout, Layout, Variant, resolve

# the numbers of the architecture profile (the rules below are written out independently)
WARP = SM90.warp_size  # 32
BANKS = SM90.banks  # 32
BANK_BYTES = SM90.bank_bytes  # 4
PHASE_BYTES = SM90.phase_bytes  # 128
ROW_BYTES = SM90.ldmatrix_row_bytes  # 16, one ldmatrix/stmatrix row


class RefFault(Exception):
    """The reference model met something a valid spec cannot contain."""


# --- expressions: a scalar evaluator with C semantics ------------------------------------


def c_div(a: int, b: int) -> int:
    """C division: the quotient truncated toward zero."""
    if b == 0:
        raise RefFault("division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: int, b: int) -> int:
    """C remainder: has the sign of the dividend, ``a == (a/b)*b + a%b``."""
    return a - b * c_div(a, b)


def evaluate(expr: Expr | Node, env: Mapping[str, int]) -> int:
    """The C value of a typed expression for one thread, with plain Python integers:
    every result is reduced to its node's C type (unsigned wraps, signed overflow is a
    fault); only the selected operands of ``&&``, ``||`` and ``?:`` are evaluated."""
    node = expr.root if isinstance(expr, Expr) else expr
    kind, op, args = node.kind, node.op, node.args
    t = node.optype or node.ctype
    assert t is not None

    def sub(k: int, to: CType | None = t) -> int:
        v = evaluate(args[k], env)
        return v if to is None else to.wrap(v)

    def checked(v: int) -> int:
        if t.signed and not t.fits(v):
            raise RefFault("signed overflow")
        return t.wrap(v)

    if kind == "num":
        return node.value
    if kind == "name":
        if op not in env:
            raise RefFault(f"no value for {op}")
        return t.wrap(env[op])
    if kind == "cast":
        return t.wrap(sub(0, None))
    if kind == "ternary":
        return sub(1) if sub(0, None) != 0 else sub(2)
    if kind == "call":
        vals = [sub(k) for k in range(len(args))]
        if op == "min":
            return min(vals)
        if op == "max":
            return max(vals)
        if op == "abs":
            return checked(abs(vals[0]))
        raise RefFault(f"unknown function {op}")
    if kind == "unop":
        x = sub(0)
        if op == "-":
            return checked(-x)
        if op == "+":
            return x
        if op == "~":
            return t.wrap(~x)
        if op == "!":
            return 1 if x == 0 else 0
        raise RefFault(f"unknown unary operator {op}")
    if kind != "binop":
        raise RefFault(f"unknown node {kind}")
    if op == "&&":
        return 0 if sub(0, None) == 0 else (1 if sub(1, None) != 0 else 0)
    if op == "||":
        return 1 if sub(0, None) != 0 else (1 if sub(1, None) != 0 else 0)
    if op in ("<<", ">>"):
        a, b = sub(0), sub(1, None)
        if not 0 <= b < t.bits:
            raise RefFault("bad shift count")
        return t.wrap(a << b) if op == "<<" else a >> b  # >> of a negative: arithmetic
    a, b = sub(0), sub(1)
    if op == "+":
        return checked(a + b)
    if op == "-":
        return checked(a - b)
    if op == "*":
        return checked(a * b)
    if op == "/":
        return checked(c_div(a, b))
    if op == "%":
        if b == 0:
            raise RefFault("modulo by zero")
        checked(c_div(a, b))  # INT_MIN % -1 is undefined like INT_MIN / -1
        return c_mod(a, b)
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    compare = {
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
        "==": a == b,
        "!=": a != b,
    }
    if op in compare:
        return 1 if compare[op] else 0
    raise RefFault(f"unknown operator {op}")


# --- addresses ---------------------------------------------------------------------------


def loop_values(loop: Loop) -> list[int]:
    """The values a loop variable takes: its list, or start, start+step, ... up to stop."""
    if loop.values is not None:
        return list(loop.values)
    if loop.step > 0:
        return list(range(loop.start, loop.stop + 1, loop.step))
    return list(range(loop.start, loop.stop - 1, loop.step))


def iterations(access: AccessDecl) -> Iterator[dict[str, int]]:
    """Every combination of loop values, the last loop varying fastest."""
    names = [lp.var for lp in access.loops]
    for combo in product(*(loop_values(lp) for lp in access.loops)):
        yield dict(zip(names, combo, strict=True))


def thread_env(tid: int, block: tuple[int, int, int]) -> dict[str, int]:
    x, y, z = block
    return {
        "threadIdx.x": tid % x,
        "threadIdx.y": (tid // x) % y,
        "threadIdx.z": tid // (x * y),
        "blockDim.x": x,
        "blockDim.y": y,
        "blockDim.z": z,
        "tid": tid,
        "lane": tid % WARP,
        "warp": tid // WARP,
    }


def byte_address(index: list[int], arr: ArrayLayout) -> int:
    """The element's byte address, from the layout's one address function, bounds-checked.

    The address (offset, padding, swizzle) is not re-derived here: ``ArrayLayout``
    computes it for every caller, and tests/test_layout_address.py checks it against
    hand-written cases. This model checks what the engine does with the addresses.
    """
    for i, (value, dim) in enumerate(zip(index, arr.padded_shape, strict=True)):
        if not 0 <= value < dim:
            raise RefFault(f"index {i} is {value}, outside 0..{dim - 1}")
    return arr(*index)


# --- one request -------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestCost:
    wavefronts: int
    ideal: int
    ways: int


def pairs_up(addr: list[int | None], distance: int) -> bool:
    """Lane n and lane n^distance have equal addresses wherever both are active."""
    for n in range(len(addr)):
        a, b = addr[n], addr[n ^ distance]
        if a is not None and b is not None and a != b:
            return False
    return True


def asks_twice(addr: list[int | None], phases: list[list[int]], width: int) -> bool:
    """Some phase asks one bank for two different words."""
    for lanes in phases:
        asked: dict[int, int] = {}
        for n in lanes:
            if (a := addr[n]) is not None:
                for word in range(a // BANK_BYTES, a // BANK_BYTES + max(1, width // BANK_BYTES)):
                    if asked.setdefault(word % BANKS, word) != word:
                        return True
    return False


def phase_cost(lanes: list[tuple[int, int]], width: int, distinct: bool) -> int:
    """Wavefronts of one phase: ``lanes`` are (lane, byte address) of its active lanes,
    each moving ``width`` bytes. With ``distinct`` a word read by several lanes is
    delivered once (broadcast); otherwise every lane's word is its own bank access."""
    per_bank: dict[int, list[int]] = {}
    for _lane, address in lanes:
        first = address // BANK_BYTES
        for word in range(first, first + max(1, width // BANK_BYTES)):
            words = per_bank.setdefault(word % BANKS, [])
            if not distinct or word not in words:
                words.append(word)
    return max((len(words) for words in per_bank.values()), default=0)


def cut_cost(addr: list[int | None], width: int, lanes: int) -> int:
    """Wavefronts of a load's lanes (``addr``, None: off) cut into phases of ``lanes``
    consecutive lanes, whatever the pair rule says (a candidate rule's or a counter's view)."""
    total = 0
    for p in range(0, len(addr), lanes):
        live = [(n, a) for n in range(p, p + lanes) if (a := addr[n]) is not None]
        total += phase_cost(live, width, True) if live else 0
    return total


def source_view(
    addr: list[int | None],
    width: int,
    clause: tuple[str, ...] | None = ("lane 31", "partner off"),
) -> int:
    """Wavefronts Nsight's Source page counts for an 8- or 16-byte load whose lanes pair
    up (``pairs_up`` at distance 1 or 2): its merged phases (32 or 16 lanes), each counted
    as its two unmerged halves where it asks a bank for two words, and an LDS.128's first
    half-warp also where lane 31 is on and, at each distance the lanes pair up at, some
    active lane of that half-warp has its partner off; lanes all reading one address: a
    wavefront for every merged phase's worth of them. ``clause``: the conditions of that
    last clause (fewer, or None for no such clause: the variants it was told from,
    docs/hardware-model.md 3); "any partner off" in place of "partner off" is the clause
    pairs10 refuted (any lane's partner off, at the first distance the lanes pair up at)."""
    wide = 2 * PHASE_BYTES // width
    on = [a for a in addr if a is not None]
    if len(set(on)) == 1:
        return -(-len(on) // wide)
    distances = [d for d in (1, 2) if pairs_up(addr, d)]

    def alone(lanes: range, d: int) -> bool:  # an active lane among ``lanes`` without lane n^d
        return any(addr[n] is not None and addr[n ^ d] is None for n in lanes)

    total = 0
    for p in range(0, WARP, wide):
        lanes = range(p, p + wide)
        mine = [addr[n] if n in lanes else None for n in range(WARP)]
        first = clause is not None and p == 0 and wide < WARP
        first = first and ("lane 31" not in clause or addr[WARP - 1] is not None)
        if first and "partner off" in clause:  # at every pairing distance, in this half-warp
            first = all(alone(lanes, d) for d in distances)
        if first and "any partner off" in clause:  # anywhere, at the first pairing distance
            first = alone(range(WARP), distances[0])
        if first or asks_twice(addr, [list(lanes)], width):
            total += cut_cost(mine, width, wide // 2)
        else:
            total += cut_cost(mine, width, wide)
    return total


def request_cost(
    addr: list[int | None], op: str, width: int, atomic: str, matrices: int
) -> RequestCost:
    """Wavefronts, ideal wavefronts and worst bank degree of one warp request.

    ``addr`` has an entry per lane of the warp (32), ``None`` for an inactive lane."""
    lanes = len(addr)
    if op in ("ldmatrix", "stmatrix"):
        phases = [list(range(8 * m, 8 * m + 8)) for m in range(matrices)]
        width = ROW_BYTES
    elif width <= BANK_BYTES:
        phases = [list(range(lanes))]
    else:
        # 8 bytes (64-bit atomics too): half-warps, 16 bytes: quarter-warps
        per_phase = PHASE_BYTES // width
        if op == "load" and (pairs_up(addr, 1) or pairs_up(addr, 2)):
            per_phase *= 2  # conflicts or not (Nsight's per-op counters)
        phases = [list(range(p, p + per_phase)) for p in range(0, lanes, per_phase)]
    distinct = not (op == "atomic" and atomic in ("add", "exch", "cas"))
    costs = []
    for lanes in phases:
        live = [(n, a) for n in lanes if (a := addr[n]) is not None]
        if live:
            costs.append(phase_cost(live, width, distinct))
    wavefronts, ideal, ways = sum(costs), len(costs), max(costs, default=0)
    if op == "atomic" and atomic == "add":
        used = {a for a in addr if a is not None}
        if len(used) == 1:  # a warp-uniform address is reduced in one wavefront
            wavefronts, ways = 1, 1
    if op == "atomic" and atomic in ("cas_spin", "declined"):  # one wavefront per phase
        wavefronts, ways = ideal, min(ways, 1)
    if op not in ("ldmatrix", "stmatrix"):
        # Nsight's ideal: no more than the active lanes packed into whole 128-byte wavefronts
        # (lanes 0 and 16 of a 64-bit atomic: 2 half-warp phases, ideal 1)
        moved = sum(1 for a in addr if a is not None) * max(width, BANK_BYTES)
        ideal = min(ideal, -(-moved // PHASE_BYTES))
    if op == "atomic" and atomic in ("cas", "cas_spin"):  # a compare pass and a swap pass
        wavefronts, ideal = 2 * wavefronts, 2 * ideal
    return RequestCost(wavefronts, ideal, ways)


# --- a whole access ----------------------------------------------------------------------


@dataclass(frozen=True)
class RefAccess:
    """Totals of one access over all its warp-iterations."""

    name: str
    requests: int
    wavefronts: int
    ideal: int
    max_ways: int


def analyze_access(spec: SpecFile, layout: Layout, access: AccessDecl) -> RefAccess:
    arr = layout.arrays[access.array]
    block = layout.block
    threads = block[0] * block[1] * block[2]
    warps = -(-threads // WARP)
    matrix = access.op in ("ldmatrix", "stmatrix")
    base_envs = [{**thread_env(t, block), **layout.params} for t in range(threads)]
    requests = wavefronts = ideal = max_ways = 0
    for loop_env in iterations(access):
        for w in range(warps):
            addr: list[int | None] = [None] * WARP
            predicate: list[bool] = []
            for lane in range(WARP):
                tid = w * WARP + lane
                if tid >= threads:
                    continue  # a partial last warp: lanes past the block are inactive
                env = {**base_envs[tid], **loop_env}
                on = access.when is None or evaluate(access.when.expr, env) != 0
                predicate.append(on)
                if not on or (matrix and lane >= 8 * access.matrices):
                    continue  # ldmatrix takes row addresses only from lanes 0..8*matrices-1
                index = [evaluate(loc.expr, env) for loc in access.index]
                address = byte_address(index, arr)
                if matrix and address % ROW_BYTES:
                    raise RefFault(f"row address {address} is not 16-byte aligned")
                addr[lane] = address
            if not any(predicate):
                continue
            if matrix and not all(predicate):
                raise RefFault(f"{access.op} predicate differs inside warp {w}")
            cost = request_cost(addr, access.op, arr.esize, access.atomic, access.matrices)
            requests += 1
            wavefronts += cost.wavefronts
            ideal += cost.ideal
            max_ways = max(max_ways, cost.ways)
    return RefAccess(access.name, requests, wavefronts, ideal, max_ways)


def reference_analyze(spec: SpecFile, variant: Variant | None = None) -> list[RefAccess]:
    """Totals of every access of a compiled spec, in order."""
    layout = resolve(spec, variant)
    return [analyze_access(spec, layout, acc) for acc in spec.accesses]
