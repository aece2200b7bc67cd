"""op_misc (docs/hardware-model.md 9e) on the Triton 3.6 labs measured on the H200 before its
rule counted shuffles, guarded-off stores and loads and special-register reads
(tests/data/triton/mma36, tutorial36b, rowsum36; ops36's in its own test): each launch's
traced op_misc against both runs, the launches the rule misses listed with (the rule's, run1's,
run2's). Most of those hold wgmma or TMA (CTA-scope memory barriers that warps run together:
timing), attention loops, or spin locks."""

from __future__ import annotations

from typing import Any

import pytest

from . import test_trace_triton_mma36 as mma36
from . import test_trace_triton_rowsum36 as rowsum36
from . import test_trace_triton_tutorial36b as tutorial36b
from .conftest import needs_nvdisasm
from .test_trace_triton_tutorial36 import trace_launch

MMA36 = {
    "attn_f16_16x32_d64_w4": (1710, 1734, 1734),
    "attn_f16_32x16_d128_w2": (388, 408, 408),
    "attn_f16_32x32_d64_w2": (976, 984, 984),
    "attn_f16_64x64_d64_w2": (206, 222, 222),
    "bf16_32x64x32_w4_s2_edge": (954, 1050, 1050),
    "f16_128x128x32_w2_s2": (56, 80, 80),
    "f16_16x32x16_w2_s1": (48, 56, 56),
    "f16_16x32x32_w8_s2_edge": (300, 492, 492),
    "f16_32x32x64_w4_s1": (40, 88, 88),
    "f16_32x64x32_w4_s3_edge": (942, 974, 974),
    "f16_chain_32x64x32_w4_s3_k200": (524, 540, 540),
    "tf32_32x32x32_w2_s2": (112, 120, 120),
    "tf32_64x64x32_w2_s1": (14, 16, 16),
    "tf32_acol_32x32x32_w4_s3": (292, 308, 308),
    "tiny_f16_32x32x16_w2_s2_k50": (44, 46, 46),
}

TUTORIAL36B = {
    "attn_d128_128x32_w8_s2_causal": (2588, 2995, 3007),
    "attn_d128_64x64_w4_s3": (1832, 1985, 2005),
    "attn_d64_128x64_w8_s3": (1772, 1918, 1929),
    "attn_d64_128x64_w8_s3_causal": (1708, 1775, 1791),
    "attn_d64_64x32_w4_s2": (3184, 3445, 3448),
    "attn_d64_64x32_w4_s2_causal": (2280, 2400, 2396),
    "lnb_200_g8_w4": (10724, 9877, 10017),
    "lnb_512_g4_w8": (7294, 8713, 8713),
    "lnb_dwdb_4x512": (676, 694, 693),
    "pers_desc_128x128x64_w8_s3": (419, 390, 389),
    "pers_desc_64x64x32_w4_s3": (315, 276, 277),
    "v_bf16_32x64_w2": (220, 236, 236),
    "v_e4m3_32x64_w2": (156, 164, 164),
    "v_e4m3_64x64_w4": (214, 238, 236),
    "v_e5m2_32x64_w2": (156, 164, 164),
    "v_f16_32x64_w2_s1": (72, 80, 80),
    "v_f32_ieee_32x32_w2": (592, 608, 608),
    "v_f32_ieee_64x64_w4": (152, 160, 160),
    "v_f32_tf32x3_32x32_w2": (392, 408, 408),
    "v_i8_32x64_w2": (140, 148, 148),
    "v_i8_64x64_w4": (214, 238, 238),
}

ROWSUM36 = {
    "rowsum_32x32x32_w2": (26, 30, 30),
    "rowsum_64x64x32_w2": (44, 47, 47),
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


@needs_nvdisasm
@pytest.mark.parametrize(("lab", "ident"), CASES)
def test_op_misc_by_the_rule(lab: str, ident: str) -> None:
    mod, misses = LABS[lab]
    traced = TRACED.get(lab) or (lambda i: trace_launch(mod.DATA, mod.LAUNCHES[i]))
    got = traced(ident).misc.wavefronts
    runs = tuple(m[ident]["per_op"]["misc"]["wavefronts"] for m in mod.BY_RUN.values())
    assert (got, *runs) == misses.get(ident, (runs[0], *runs)), ident
