"""op_misc (docs/hardware-model.md 9e) on the Triton 3.6 labs measured on the H200 before its
rule counted shuffles, guarded-off stores and loads and special-register reads
(tests/data/triton/mma36, tutorial36b, rowsum36; ops36's in its own test): each launch's
traced op_misc against both runs, the launches the rule misses listed with (the rule's, run1's,
run2's). Most of those hold wgmma or TMA (CTA-scope memory barriers that warps run together:
timing), attention loops, or spin locks. Triton's mma.sync dots read threadIdx.x again after
barriers: a warp's reads after its first cost 1 each (mma36 28 -> 43 of 43 exact with that,
tutorial36b 19 -> 28 of 40)."""

from __future__ import annotations

from typing import Any

import pytest

from . import test_trace_triton_mma36 as mma36
from . import test_trace_triton_rowsum36 as rowsum36
from . import test_trace_triton_tutorial36b as tutorial36b
from .conftest import needs_nvdisasm
from .test_trace_triton_tutorial36 import trace_launch

MMA36: dict[str, tuple[int, ...]] = {}  # all 43 exact (15 missed before the threadIdx.x rule)

TUTORIAL36B = {
    "attn_d128_128x32_w8_s2_causal": (2612, 2995, 3007),
    "attn_d128_64x64_w4_s3": (1864, 1985, 2005),
    "attn_d64_128x64_w8_s3": (1788, 1918, 1929),
    "attn_d64_128x64_w8_s3_causal": (1720, 1775, 1791),
    "attn_d64_64x32_w4_s2": (3248, 3445, 3448),
    "attn_d64_64x32_w4_s2_causal": (2320, 2400, 2396),
    "lnb_200_g8_w4": (10724, 9877, 10017),
    "lnb_512_g4_w8": (7294, 8713, 8713),
    "lnb_dwdb_4x512": (692, 694, 693),
    "pers_desc_128x128x64_w8_s3": (407, 390, 389),
    "pers_desc_64x64x32_w4_s3": (309, 276, 277),
    "v_e4m3_64x64_w4": (238, 238, 236),
}

ROWSUM36 = {
    "rowsum_32x32x32_w2": (28, 30, 30),
    "rowsum_64x64x32_w2": (46, 47, 47),
}

LABS: dict[str, tuple[Any, dict[str, tuple[int, ...]]]] = {
    "mma36": (mma36, MMA36),
    "tutorial36b": (tutorial36b, TUTORIAL36B),
    "rowsum36": (rowsum36, ROWSUM36),
}
#: each lab's own traced launches where its test module keeps them (traced once a process)
TRACED = {"mma36": mma36.traced, "tutorial36b": tutorial36b.trace}
#: one launch of each lab in `make test`, the rest slow
FAST = {"f16_32x32x32_w2_s2", "rowsum_32x32x32_w4"}
CASES = [
    pytest.param(lab, ident, marks=() if ident in FAST else pytest.mark.slow)
    for lab, (mod, _) in LABS.items()
    for ident in sorted(mod.LAUNCHES)
]


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(("lab", "ident"), CASES)
def test_op_misc_by_the_rule(lab: str, ident: str) -> None:
    mod, misses = LABS[lab]
    traced = TRACED.get(lab) or (lambda i: trace_launch(mod.DATA, mod.LAUNCHES[i]))
    got = traced(ident).misc.wavefronts
    runs = tuple(m[ident]["per_op"]["misc"]["wavefronts"] for m in mod.BY_RUN.values())
    assert (got, *runs) == misses.get(ident, (runs[0], *runs)), ident
