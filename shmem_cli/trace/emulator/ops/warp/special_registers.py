"""The special registers a thread reads its place from (S2R, S2UR, CS2R): thread and CTA
ids, the CTA's rank in its cluster, lane and lane masks, warp id, the shared window's top,
the SM clocks and the global timer (:mod:`...sync.clock`).

A value that differs between blocks (the CTA id) carries the block taint; a clock's or the
SM id, which the emulator cannot know, carries the unknown taint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .....cuda.sass import Instruction
from .....cuda.sass_operands import Special
from ...op_table import Context, Step, op, unsupported
from ...operands import write_regs, write_u32
from ...state import SHARED_WINDOW_HI, TAINT_BLOCK, TAINT_UNKNOWN, Block, Idx
from ...sync.clock import CLOCKS
from ...trace_error import NotModelled

_SPECIAL_TID = {"SR_TID.X": 0, "SR_TID.Y": 1, "SR_TID.Z": 2}
_SPECIAL_CTA = {"SR_CTAID.X": 0, "SR_CTAID.Y": 1, "SR_CTAID.Z": 2}


def special_value(b: Block, name: str, ix: Idx, ins: Instruction) -> tuple[Any, Any]:
    ids = b.ids(ix)
    lane = b.lane[ix]
    if name in _SPECIAL_TID:
        return b.tid_xyz[_SPECIAL_TID[name]][ix].astype(np.uint32), 0
    if name in _SPECIAL_CTA:  # differs between blocks: tainted so
        return b.cta_idx[_SPECIAL_CTA[name]][b.cta[ids]].astype(np.uint32), TAINT_BLOCK
    if name == "SR_LANEID":
        return lane.astype(np.uint32), 0
    if name == "SR_SWINHI":
        return np.full(len(ids), SHARED_WINDOW_HI, dtype=np.uint32), 0
    if name == "SR_CgaCtaId":  # the CTA's rank in its cluster: the same ranks in every
        # cluster, and a grid's first cluster runs whole (grid.Watch): no taint
        return b.cta_rank[b.cta[ids]].astype(np.uint32), 0
    if name in ("SRZ", "SR_LMEMHIOFF"):  # LMEMHIOFF: the stack's lowest address, which the
        # -O0/-G prologue checks the stack pointer against (a thread's local memory grows
        # on first use here: its whole window, from 0)
        return np.zeros(len(ids), dtype=np.uint32), 0
    one = np.uint32(1)
    masks: dict[str, Callable[[], Any]] = {
        "SR_EQMASK": lambda: one << lane,
        "SR_LTMASK": lambda: (one << lane) - one,
        "SR_LEMASK": lambda: ((one << lane) - one) | (one << lane),
        "SR_GTMASK": lambda: ~(((one << lane) - one) | (one << lane)),
        "SR_GEMASK": lambda: ~((one << lane) - one),
    }
    if name in masks:
        return np.asarray(masks[name](), dtype=np.uint32), 0
    if name in ("SR_WARPID", "SR_VIRTID"):  # the warp within its CTA
        return ((ids % b.stride) // b.warp_size).astype(np.uint32), 0
    if name in CLOCKS:  # the CTA's SM clock or the global timer (sync/clock.py)
        return b.clock.read(name, b.warp[ids], b.cta[ids], ins), TAINT_UNKNOWN
    if name in ("SR_SMID", "SR_VIRTUALSMID"):  # the SM a block runs on is not known: each
        # says 0, inexact (PTX %smid on sm_90 reads SR_VIRTUALSMID: Triton's smid())
        return np.zeros(len(ids), dtype=np.uint32), TAINT_UNKNOWN
    raise NotModelled(f"special register {name} is not modelled", ins)


@op("S2R", "S2UR", "CS2R")
def _s2r(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 2 or not isinstance(ops[1], Special):
        raise unsupported(ins)
    name = ops[1].name
    if ins.opcode == "CS2R" and "32" not in ins.mods:
        w2 = write_regs(ops[0], 2, ins)

        def step64(b: Block, ix: Idx) -> None:
            v, t = special_value(b, name, ix, ins)  # a clock's: both words of one value
            w2(b, ix, (v, b.clock.high if name in CLOCKS else np.zeros_like(v)), t)

        return step64
    w = write_u32(ops[0], ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = special_value(b, name, ix, ins)
        w(b, ix, v, t)

    return step
