"""Layout sweeps: one spec under many paddings, swizzles and params, ranked.

A sweep is the cross product of its *axes* (``--param``, ``--pad``, ``--swizzle``;
params outermost, the last axis fastest; :mod:`.options`). Every point is a
:class:`~shmem_cli.spec.layout.Variant`; :class:`~.evaluate.Evaluator` analyzes it
(:mod:`.evaluate`) and :func:`~.evaluate.run_sweep` ranks the results
(:mod:`.results`; swizzles that are one map over the arrays are one row,
:mod:`.same_maps`): fewest wavefronts, then fewest extra shared-memory bytes, then
sweep order. A variant that does not fit shared memory is still analyzed (and
shown) but never best; one that is invalid (an index out of bounds with the new
pad, a swizzle whose alignment is not met) carries the reason instead of
stopping the sweep.

The answers are the ones :func:`shmem_cli.analysis.analyze.analyze_spec` gives for the
same variant (tests/test_sweep.py checks this on every example spec).
"""

from __future__ import annotations

from ...hardware.swizzle import parse_swizzle, swizzle_label
from .evaluate import Evaluator, run_sweep
from .options import MAX_VARIANTS, Axis, Plan, Settings, parse_axis, parse_values, split_swizzles
from .results import AccessTotals, Outcome, SweepResult, VariantResult, pick_best

__all__ = [
    "MAX_VARIANTS",
    "AccessTotals",
    "Axis",
    "Evaluator",
    "Outcome",
    "Plan",
    "Settings",
    "SweepResult",
    "VariantResult",
    "parse_axis",
    "parse_swizzle",
    "parse_values",
    "pick_best",
    "run_sweep",
    "split_swizzles",
    "swizzle_label",
]
