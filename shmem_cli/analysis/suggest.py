"""``shmem analyze --suggest``: the cheapest pad or swizzle that removes a conflict.

For each conflicting access it tries pads 0..32 and the usual swizzles on the
access's array, evaluated with :class:`~shmem_cli.analysis.sweep.evaluate.Evaluator` on the
compiled spec the analysis kept (:attr:`~shmem_cli.model.FileResult.spec`):
nothing is read or parsed again.
"""

from __future__ import annotations

from ..hardware.swizzle import TMA_SWIZZLES, Swizzle, swizzle_label
from ..model import FileResult, Report
from ..plumbing.errors import ShmemError
from ..plumbing.frozen import frozen
from ..spec.budget import layouts_work, search_refusal
from ..spec.compile import SpecFile
from ..spec.layout import Layout, Variant, resolve
from .analyze import checked_space
from .spec_synthesis import SynthesisBudget
from .sweep.evaluate import Evaluator
from .sweep.results import Outcome
from .swizzle_terms import terms
from .synthesis import Synthesis

SUGGEST_PADS = range(0, 33)
SUGGEST_SWIZZLES: tuple[Swizzle | None, ...] = (None, *TMA_SWIZZLES.values())


def _describe_change(layout: Layout, array: str, variant: Variant) -> str:
    arr = layout.arrays[array]
    parts = []
    new_pad = variant.pad.get(array, arr.pad)
    new_swz = variant.swizzle.get(array, arr.swizzle)
    if new_pad != arr.pad:
        dims = "".join(f"[{d}]" for d in (*arr.shape[:-1], arr.shape[-1] + new_pad))
        parts.append(f"pad {array} {arr.pad} -> {new_pad} ({array}{dims})")
    if new_swz != arr.swizzle:
        parts.append(f"swizzle {array} {swizzle_label(arr.swizzle)} -> {swizzle_label(new_swz)}")
    return " and ".join(parts)


def pitch_swizzle(layout: Layout, array: str) -> Swizzle | None:
    """CuTe Swizzle<3,4,S> whose source bits are the row bits of a 2^(S+4)-byte row (S > 3).

    The TMA modes XOR bits 7.. (128-byte rows); with longer power-of-two rows the
    shift must grow with the pitch so that the XOR-ed bits are row bits.
    """
    arr = layout.arrays[array]
    if len(arr.shape) < 2:
        return None
    pitch = arr.shape[-1] * arr.esize
    if pitch < 256 or pitch & (pitch - 1) or arr.esize > 16:
        return None
    shift = pitch.bit_length() - 1 - 4
    if shift > 16:
        return None
    return Swizzle.cute(3, 4, shift)


@frozen
class Fix:
    """What --suggest says about one conflicting access: the line shown under it
    (``hint``) and the same in a few words for a one-line overview (``short``)."""

    hint: str
    short: str


def suggest(spec: SpecFile, result: FileResult) -> dict[str, str]:
    """A one-line fix per conflicting access: the hints of :func:`fixes`."""
    return {name: fix.hint for name, fix in fixes(spec, result).items()}


def fixes(spec: SpecFile, result: FileResult) -> dict[str, Fix]:
    """The fix of each conflicting access: the cheapest pad 0..32 / swizzle of its array.

    The swizzles tried are none, the TMA modes and, for power-of-two rows of 256
    bytes or more, the CuTe Swizzle<3,4,S> matched to the row pitch; then the XOR
    swizzle synthesized for the array (:mod:`.spec_synthesis`). Candidates
    change only that array; they are ranked by the wavefronts of all accesses to
    the array (a fix must not just move the conflict), then shared-memory bytes.
    """
    if result.error is not None:
        return {}
    hints: dict[str, Fix] = {}
    by_name = {a.site.name: a for a in result.accesses}
    conflicted = [
        a for a in spec.accesses if a.name in by_name and not by_name[a.name].cost.conflict_free
    ]
    ev = Evaluator(spec)
    try:
        layout = resolve(spec)
    except ShmemError:
        return {}
    spent = 0  # work units of the searches so far: MAX_SEARCH_WORK bounds them all
    budget = SynthesisBudget()  # and MAX_RUN_LANES the lanes of its syntheses
    for array in dict.fromkeys(a.array for a in conflicted):
        numbers = [k for k, a in enumerate(spec.accesses) if a.array == array]
        current = ev.evaluate(Variant(), only=numbers)
        if not current.valid:
            continue
        declared = layout.arrays[array].swizzle
        swizzles = list(dict.fromkeys((declared, *SUGGEST_SWIZZLES, pitch_swizzle(layout, array))))
        tried = [
            Variant(pad={array: p}, swizzle={array: s}) for p in SUGGEST_PADS for s in swizzles
        ]
        synth = budget.synthesized(spec, array)
        if synth is not None and not synth.swizzle.identity:
            tried.append(Variant(swizzle={array: synth.swizzle}))
        spaces = [checked_space(spec, layout, spec.accesses[k]) for k in numbers]
        # too large to try every layout, with the spec's searches before it
        needed = layouts_work(spaces, len(tried), ev.cache_lanes)
        refusal = search_refusal(needed, len(tried), spent)
        if refusal is not None:
            short = "not searched: too many layouts to try (shmem sweep)"
            hints.update({a.name: Fix(refusal, short) for a in conflicted if a.array == array})
            continue
        spent += needed
        best: tuple[tuple[int, int, int], Variant, Outcome] | None = None
        for n, v in enumerate(tried):
            out = ev.evaluate(v, only=numbers)
            if not (out.valid and out.fits):
                continue
            key = (out.totals.wavefronts, out.smem_bytes or 0, n)
            if best is None or key < best[0]:
                best = (key, v, out)
        first: str | None = None  # the access whose hint says the array's fix in full
        for k in numbers:
            acc = spec.accesses[k]
            if acc not in conflicted:
                continue
            here = numbers.index(k)
            now = current.accesses[here]
            if best is None or best[2].totals.wavefronts >= current.totals.wavefronts:
                hint = (
                    f"no pad 0..32 or swizzle (none, 32B, 64B, 128B) of {array} lowers its "
                    f"wavefronts ({current.totals.wavefronts:,} over its accesses)"
                    if first is None
                    else f"no fix of {array} found (see '{first}' above)"
                )
                hints[acc.name] = Fix(hint, f"none found (pads 0..32, swizzles of {array})")
                first = first or acc.name
                continue
            _, v, out = best
            after = out.accesses[here]
            delta = (out.smem_bytes or 0) - (current.smem_bytes or 0)
            cost = (
                f"+{delta:,} B shared"
                if delta > 0
                else ("no extra bytes" if delta == 0 else f"saves {-delta:,} B")
            )
            state = (
                "conflict-free"
                if after.totals.conflict_free
                else f"still {after.totals.max_ways}-way"
            )
            change = f"{now.totals.wavefronts:,} -> {after.totals.wavefronts:,} wavefronts, {state}"
            # after the fix, as shmem sweep's cells say it: "32 ok", "128 4-way"
            then = f"{after.totals.wavefronts:,} " + (
                "ok" if after.totals.conflict_free else state[6:]
            )
            if first is not None:  # one fix of the array, said once: under its first access
                hint = f"the fix for '{first}' above: this access {change}"
                hints[acc.name] = Fix(hint, f"the same fix of {array}: {then}")
                continue
            first = acc.name
            described = _describe_change(layout, array, v)
            text = f"cheapest fix: {described} ({cost}): this access {change}"
            if len(numbers) > 1:
                was, fixed = current.totals.wavefronts, out.totals.wavefronts
                text += f"; all {array} accesses {was:,} -> {fixed:,}"
            chosen = v.swizzle.get(array)
            if synth is not None and chosen is not None and chosen == synth.swizzle:
                arr = layout.arrays[array]
                row = arr.padded_shape[-1] if len(arr.shape) >= 2 else None
                said = terms(chosen, arr.esize, arr.decl.dtype.name, row)
                # on lines of their own: a report stays within its width unwrapped
                text += f"\n      {said.sentence(array)}\n      {proof(synth)}"
            short = _short_change(described) + (
                f" ({cost.removesuffix(' shared')})" if delta else ""
            )
            hints[acc.name] = Fix(text, f"{short}: {then}")
    return hints


def proof(synth: Synthesis) -> str:
    """Whether the synthesized map is the best there is, in words."""
    if synth.reaches_bound:
        return f"optimal: it reaches the ideal {synth.bound:,} wavefronts"
    if synth.exhaustive:
        return (
            f"the best XOR swizzle (every one costed); the ideal {synth.bound:,} wavefronts is "
            "out of reach of any: only padding or another mapping gets closer"
        )
    return f"the best XOR swizzle found; the ideal is {synth.bound:,} wavefronts"


def _short_change(described: str) -> str:
    """``pad tile 0 -> 1 (tile[32][33])`` without the new shape (the overview's words)."""
    return " and ".join(part.split(" (", 1)[0] for part in described.split(" and "))


def suggest_report(report: Report) -> dict[str, dict[str, str]]:
    """:func:`suggest` for every valid file of a report with a conflict: path -> access -> hint."""
    return {
        path: {name: fix.hint for name, fix in found.items()}
        for path, found in report_fixes(report).items()
    }


def report_fixes(report: Report) -> dict[str, dict[str, Fix]]:
    """:func:`fixes` for every valid file of a report with a conflict: path -> access -> fix."""
    out: dict[str, dict[str, Fix]] = {}
    for f in report.files:
        if f.spec is None or f.error is not None or all(a.cost.conflict_free for a in f.accesses):
            continue
        try:
            found = fixes(f.spec, f)
        except ShmemError:
            continue
        if found:
            out[f.path] = found
    return out
