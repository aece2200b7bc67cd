"""Integer minima, maxima, sums and differences over a register's lanes: IMNMX/VIMNMX (two
values, with the predicates of which one was taken), VIMNMX3 (three), VIADD and VIADDMNMX
(a sum, then a minimum or maximum), VABSDIFF/VABSDIFF4 (absolute differences, summed with
``.ACC``) and IDP (the dot products of ``__dp4a``/``__dp2a``).

A register is one 32-bit lane (signed, or ``.U32``) or, with ``.S16x2``/``.U16x2``/``.16x2``,
two 16-bit lanes computed apart, low lane in bits 0..15; ``.RELU`` then clamps each lane at 0.
A ``-`` on a source negates each lane. As ``__vimax3_s16x2``, ``__vibmax_u16x2``,
``__vabsdiffu4``, ``__vsadu4``, ``__dp2a_hi`` and their neighbours compile for sm_90
(tests/data/trace/opcodes_cuda's ``video_ops``, checked against the CUDA Math API's
definitions and the H200's outputs).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg
from ....plumbing.frozen import frozen
from ...distinct_rows import spread
from ..op_table import Context, Step, op, unsupported
from ..operands import Reader, is_pred, read_pred, read_u32, write_pred, write_u32
from ..state import Block, Idx, TraceError

_U = np.uint32


@frozen
class Lanes:
    """How a register splits into lanes: their count (1 or 2), width and signedness."""

    count: int
    signed: bool

    @property
    def bits(self) -> int:
        return 32 // self.count

    def split(self, v: Any) -> list[Any]:
        """The lanes of uint32 values as int64, lowest first."""
        v = np.asarray(v, dtype=_U).astype(np.int64)
        size = 1 << self.bits
        out = []
        for k in range(self.count):
            x = (v >> (self.bits * k)) & (size - 1)
            out.append(np.where(x >= size >> 1, x - size, x) if self.signed else x)
        return out

    def join(self, lanes: list[Any]) -> Any:
        """uint32 values from int64 lanes (each wrapped to its width)."""
        mask = (1 << self.bits) - 1
        out = np.zeros(np.broadcast(*lanes).shape, dtype=np.int64)
        for k, x in enumerate(lanes):
            out |= (np.asarray(x, dtype=np.int64) & mask) << (self.bits * k)
        return out.astype(_U)


def lanes_of(ins: Instruction) -> Lanes:
    mods = set(ins.mods)
    if mods & {"S16x2", "U16x2", "16x2"}:
        return Lanes(2, "U16x2" not in mods)
    return Lanes(1, "U32" not in mods)


def lane_reader(o: Operand, lanes: Lanes, ins: Instruction) -> Reader:
    """A source's value; a ``-`` negates each lane (the whole register when it has one)."""
    if lanes.count == 1 or not (isinstance(o, Reg) and o.neg):
        return read_u32(o, "i", ins)
    plain = read_u32(replace(o, neg=False), "i", ins)

    def rd(b: Block, ix: Idx) -> tuple[Any, Any]:
        v, t = plain(b, ix)
        return lanes.join([-x for x in lanes.split(v)]), t

    return rd


def _sources(ops: list[Operand], n: int, lanes: Lanes, ins: Instruction) -> list[Reader]:
    if len(ops) != n:
        raise unsupported(ins)
    return [lane_reader(o, lanes, ins) for o in ops]


def _out(b: Block, ix: Idx, lanes: Lanes, result: list[Any], relu: bool) -> Any:
    if relu:
        result = [np.maximum(x, 0) for x in result]
    return spread(lanes.join(result), b.count(ix))


@op("IMNMX", "VIMNMX")
def _imnmx(ins: Instruction, ctx: Context) -> Step:
    """``VIMNMX d, [Plo, Phi,] a, b, p``: per lane the minimum of ``a`` and ``b`` where ``p``
    holds, else the maximum; the optional predicates say, for the low and the high lane,
    whether the result is ``a``'s value (``__vibmax_s16x2``'s ``pred_lo`` and ``pred_hi``)."""
    lanes = lanes_of(ins)
    relu = "RELU" in ins.mods
    ops = list(ins.operands)
    w = write_u32(ops.pop(0), ins)
    picks = []
    while len(ops) > 3 and is_pred(ops[0]):
        picks.append(write_pred(ops.pop(0), ins))
    if picks and len(picks) != lanes.count:
        raise unsupported(ins, "a predicate per lane expected")
    rp = read_pred(ops.pop(), ins)
    ra, rb = _sources(ops, 2, lanes, ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        t = tx | ty | tp
        xs, ys = lanes.split(x), lanes.split(y)
        res = [np.where(p, np.minimum(u, v), np.maximum(u, v)) for u, v in zip(xs, ys, strict=True)]
        w(b, ix, _out(b, ix, lanes, res, relu), t)
        for k, wp in enumerate(picks):
            wp(b, ix, spread(res[k] == xs[k], b.count(ix)), t)

    return step


@op("VIMNMX3")
def _vimnmx3(ins: Instruction, ctx: Context) -> Step:
    """``VIMNMX3 d, a, b, c, p``: per lane the minimum of three where ``p`` holds, else the
    maximum (``__vimin3_s32``, ``__vimax3_u16x2_relu``...)."""
    lanes = lanes_of(ins)
    relu = "RELU" in ins.mods
    ops = list(ins.operands)
    w = write_u32(ops.pop(0), ins)
    rp = read_pred(ops.pop(), ins)
    ra, rb, rc = _sources(ops, 3, lanes, ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz), (p, tp) = ra(b, ix), rb(b, ix), rc(b, ix), rp(b, ix)
        res = []
        for u, v, s in zip(lanes.split(x), lanes.split(y), lanes.split(z), strict=True):
            lo, hi = np.minimum(np.minimum(u, v), s), np.maximum(np.maximum(u, v), s)
            res.append(np.where(p, lo, hi))
        w(b, ix, _out(b, ix, lanes, res, relu), tx | ty | tz | tp)

    return step


@op("VIADD")
def _viadd(ins: Instruction, ctx: Context) -> Step:
    """``VIADD d, a, b``: the wrapping sum, per lane with ``.16x2``."""
    lanes = lanes_of(ins)
    ops = list(ins.operands)
    if any(is_pred(o) for o in ops):
        raise unsupported(ins)
    w = write_u32(ops.pop(0), ins)
    ra, rb = _sources(ops, 2, lanes, ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
        res = [u + v for u, v in zip(lanes.split(x), lanes.split(y), strict=True)]
        w(b, ix, _out(b, ix, lanes, res, False), tx | ty)

    def whole(b: Block, ix: Idx) -> None:  # one 32-bit lane: uint32 arithmetic wraps alike
        (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
        w(b, ix, spread(np.add(x, y, dtype=_U), b.count(ix)), tx | ty)

    return whole if lanes.count == 1 else step


@op("VIADDMNMX")
def _viaddmnmx(ins: Instruction, ctx: Context) -> Step:
    """``VIADDMNMX d, a, b, c, p``: per lane the wrapping sum ``a + b``, then its minimum
    with ``c`` where ``p`` holds, else its maximum, as ``__viaddmin_s32`` and
    ``__viaddmax_s16x2_relu`` compile (tests/data/trace/opcodes' ``add_min_max``)."""
    lanes = lanes_of(ins)
    relu = "RELU" in ins.mods
    ops = list(ins.operands)
    w = write_u32(ops.pop(0), ins)
    rp = read_pred(ops.pop(), ins)
    ra, rb, rc = _sources(ops, 3, lanes, ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz), (p, tp) = ra(b, ix), rb(b, ix), rc(b, ix), rp(b, ix)
        total = lanes.join([u + v for u, v in zip(lanes.split(x), lanes.split(y), strict=True)])
        res = [
            np.where(p, np.minimum(s, c), np.maximum(s, c))
            for s, c in zip(lanes.split(total), lanes.split(z), strict=True)
        ]
        w(b, ix, _out(b, ix, lanes, res, relu), tx | ty | tz | tp)

    return step


@op("VABSDIFF")
def _vabsdiff(ins: Instruction, ctx: Context) -> Step:
    """``VABSDIFF d, a, b, c``: ``|a - b| + c`` on 32 bits, signed (``.U32``: unsigned), the
    sum wrapping (``__sad``, ``__usad``)."""
    lanes = lanes_of(ins)
    ops = list(ins.operands)
    w = write_u32(ops.pop(0), ins)
    ra, rb, rc = _sources(ops, 3, lanes, ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
        (u,), (v,) = lanes.split(x), lanes.split(y)
        total = np.abs(u - v) + np.asarray(z, dtype=_U).astype(np.int64)
        w(b, ix, spread(Lanes(1, False).join([total]), b.count(ix)), tx | ty | tz)

    return step


def _byte_lanes(v: Any, signed: bool) -> list[Any]:
    v = np.asarray(v, dtype=_U).astype(np.int64)
    out = []
    for k in range(4):
        x = (v >> (8 * k)) & 0xFF
        out.append(np.where(x >= 128, x - 256, x) if signed else x)
    return out


@op("VABSDIFF4")
def _vabsdiff4(ins: Instruction, ctx: Context) -> Step:
    """``VABSDIFF4.U8 d, a, b, c``: the four byte-wise absolute differences ``|a_i - b_i|``,
    packed (``__vabsdiffu4``; ``c`` is 0 in the code nvcc writes, and a nonzero one, whose
    bytes PTX would merge, stops the trace); ``.ACC``: their sum plus ``c`` (``__vsadu4``).
    ``.S8`` bytes are signed."""
    signed = "S8" in ins.mods
    acc = "ACC" in ins.mods
    ops = list(ins.operands)
    if len(ops) != 4:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra, rb, rc = (read_u32(o, "i", ins) for o in ops[1:])

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
        diffs = [
            np.abs(u - v)
            for u, v in zip(_byte_lanes(x, signed), _byte_lanes(y, signed), strict=True)
        ]
        if acc:
            total = sum(diffs) + np.asarray(z, dtype=_U).astype(np.int64)
            out = (np.asarray(total) & 0xFFFFFFFF).astype(_U)
        elif np.any(z):
            raise TraceError("VABSDIFF4 merges its bytes with a nonzero register", ins)
        else:
            out = sum(((d & 0xFF) << (8 * k)) for k, d in enumerate(diffs)).astype(_U)
        w(b, ix, spread(out, b.count(ix)), tx | ty | tz)

    return step


@op("IDP")
def _idp(ins: Instruction, ctx: Context) -> Step:
    """``IDP.4A.Sa.Sb d, a, b, c``: ``c`` plus the dot product of the four bytes of ``a``
    and ``b`` (``__dp4a``); ``IDP.2A.LO|HI.S16|U16.S8|U8``: ``c`` plus the two 16-bit lanes
    of ``a`` times bytes 0 and 1 (``.LO``) or 2 and 3 (``.HI``) of ``b`` (``__dp2a_lo``,
    ``__dp2a_hi``); the sum wraps at 32 bits."""
    mods = list(ins.mods)
    kinds = [m for m in mods if m in ("S8", "U8", "S16", "U16")]
    four = "4A" in mods
    if len(kinds) != 2 or ("2A" not in mods and not four) or len(ins.operands) != 4:
        raise unsupported(ins)
    if not four and not ({"LO", "HI"} & set(mods)):
        raise unsupported(ins)
    a_signed, b_signed = kinds[0].startswith("S"), kinds[1].startswith("S")
    high = "HI" in mods
    w = write_u32(ins.operands[0], ins)
    ra, rb, rc = (read_u32(o, "i", ins) for o in ins.operands[1:])

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
        yb = _byte_lanes(y, b_signed)
        if four:
            terms = [u * v for u, v in zip(_byte_lanes(x, a_signed), yb, strict=True)]
        else:
            xs = Lanes(2, a_signed).split(x)
            terms = [xs[0] * yb[2 if high else 0], xs[1] * yb[3 if high else 1]]
        total = sum(terms) + np.asarray(z, dtype=_U).astype(np.int64)
        out = (np.asarray(total) & 0xFFFFFFFF).astype(_U)
        w(b, ix, spread(out, b.count(ix)), tx | ty | tz)

    return step
