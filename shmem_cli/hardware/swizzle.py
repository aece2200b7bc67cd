"""Swizzles: XOR maps of the byte offsets inside an array, and how they are written.

A :class:`Swizzle` is a linear map over GF(2) on the bits of an in-array byte offset
``o``: each *term* ``(s, m)`` XORs the mask ``m`` into ``o`` when bit ``s`` of ``o`` is
set, every term reading the offset as it was before any term applied::

    o' = o ^ m1 * bit(o, s1) ^ m2 * bit(o, s2) ^ ...

Every target bit of a term lies below its source bit, so the map is a permutation
(its matrix is unitriangular) of every aligned block of ``period`` bytes, and it moves
``unit``-byte pieces whole. CuTe's ``Swizzle<B,M,S>`` is the special case that XORs
bits ``M+S .. M+S+B-1`` into bits ``M .. M+B-1`` (one term per bit); the TMA modes
32B, 64B and 128B are three of those. Swizzles compose (:meth:`Swizzle.then`); a map
that is no single CuTe swizzle is written as CuTe swizzles joined by ``^``, each
applied to the original offset. An array layout
(:class:`shmem_cli.spec.layout.ArrayLayout`) composes its swizzle into the byte
address of every element; this module knows nothing of arrays.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ..plumbing.errors import shorten
from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

# a string constraint: numpy.typing is not imported at run time (start-up)
Offset = TypeVar("Offset", int, "npt.NDArray[np.int64]")

# a pattern, compiled by re (and cached) on first use: most specs name no CuTe swizzle
_CUTE = r"(?i)^(?:swizzle|s)?<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\Z"
MAX_BIT = 31  # offsets are below 2 GiB: no term reads or writes a higher bit
MAX_TERMS = 64  # bounded text: no more CuTe pieces than this in one written map

Terms = tuple[tuple[int, int], ...]


def _bits(mask: int) -> list[int]:
    return [b for b in range(mask.bit_length()) if mask >> b & 1]


def _canonical(terms: dict[int, int]) -> Terms:
    return tuple(sorted((s, m) for s, m in terms.items() if m))


@frozen
class Swizzle:
    """An XOR map of in-array byte offsets (module docstring): ``terms`` are (source bit,
    target mask) pairs, sources ascending, each target below its source."""

    terms: Terms
    label: str

    # --- making one ---------------------------------------------------------------------

    @classmethod
    def cute(cls, bits: int, base: int, shift: int) -> Swizzle:
        """CuTe's ``Swizzle<bits, base, shift>``; ValueError when it is not a permutation."""
        if not (0 <= bits <= 8 and 0 <= base <= 16 and 1 <= shift <= 16):
            raise ValueError("swizzle bits must be 0..8, base 0..16 and shift 1..16")
        if bits > 0 and shift < bits:
            raise ValueError(
                f"swizzle shift ({shift}) must be at least bits ({bits}) so source and target "
                "bits do not overlap"
            )
        terms = {base + shift + i: 1 << (base + i) for i in range(bits)}
        return cls(_canonical(terms), f"Swizzle<{bits},{base},{shift}>")

    @classmethod
    def from_terms(cls, terms: dict[int, int] | Terms, label: str | None = None) -> Swizzle:
        """The map of ``terms`` (source bit -> target mask); ValueError when a target bit
        is not below its source or a bit is out of range. Labelled as written by
        :func:`written` unless ``label`` is given."""
        merged: dict[int, int] = {}
        for s, m in dict(terms).items() if isinstance(terms, dict) else terms:
            if not (0 <= s <= MAX_BIT) or m < 0 or m >= 1 << s:
                raise ValueError(
                    f"a swizzle term XORs bit {s} into bits {_bits(m)}: targets must lie below "
                    f"their source, within bits 0..{MAX_BIT}"
                )
            merged[s] = merged.get(s, 0) ^ m
        canon = _canonical(merged)
        swz = cls(canon, "")
        return cls(canon, label if label is not None else written(swz))

    # --- what it is ---------------------------------------------------------------------

    @property
    def identity(self) -> bool:
        return not self.terms

    @property
    def period(self) -> int:
        """Bytes after which the pattern repeats; the array must start at a multiple."""
        return 1 << (self.terms[-1][0] + 1) if self.terms else 1

    @property
    def unit(self) -> int:
        """Bytes moved whole: the offset bits below the lowest target are kept."""
        low = min((m & -m).bit_length() - 1 for _, m in self.terms) if self.terms else 31
        return 1 << low

    @property
    def targets(self) -> int:
        """Every bit some term writes, as a mask."""
        out = 0
        for _, m in self.terms:
            out |= m
        return out

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(s for s, _ in self.terms)

    def cute_form(self) -> tuple[int, int, int] | None:
        """(bits, base, shift) when the map is one CuTe ``Swizzle<B,M,S>``, else None."""
        if not self.terms:
            return None
        base = self.terms[0][1].bit_length() - 1
        shift = self.terms[0][0] - base
        bits = len(self.terms)
        if shift < bits:
            return None
        for i, (s, m) in enumerate(self.terms):
            if m != 1 << (base + i) or s != base + shift + i:
                return None
        return bits, base, shift

    # --- using it -----------------------------------------------------------------------

    def apply(self, offset: Offset) -> Offset:
        """The swizzled byte offset (an int or an array of them)."""
        out = offset
        for s, m in self.terms:
            out = out ^ (((offset >> s) & 1) * m)
        return out

    def then(self, other: Swizzle) -> Swizzle:
        """This map followed by ``other`` (``other(self(o))``), as one map."""
        # column of source bit b in the product: other applied to self's image of 2^b
        cols: dict[int, int] = {}
        for b in sorted({*self.sources, *other.sources}):
            image = other.apply(self.apply(1 << b))
            cols[b] = image ^ (1 << b)
        return Swizzle.from_terms(cols)

    def on_elements(self, element: int) -> Swizzle | None:
        """The same map on element indices of ``element``-byte elements (a power of two),
        None when it moves pieces smaller than an element."""
        if element & (element - 1) or element < 1:
            return None
        k = element.bit_length() - 1
        if self.terms and self.unit < element:
            return None
        return Swizzle.from_terms({s - k: m >> k for s, m in self.terms})

    def matrix(self) -> list[list[int]]:
        """The bit matrix of ``o' = M o`` over GF(2), rows and columns bits 0..period-1
        (row = output bit, column = input bit)."""
        n = self.terms[-1][0] + 1 if self.terms else 0
        rows = [[1 if r == c else 0 for c in range(n)] for r in range(n)]
        for s, m in self.terms:
            for t in _bits(m):
                rows[t][s] ^= 1
        return rows

    def to_json(self) -> dict[str, object]:
        """CuTe ``{"bits", "base", "shift"}`` on byte offsets when the map has that form,
        else the bit matrix (``matrix[out][in]`` over bits 0..period-1) and its terms
        (``"xor": [[source bit, [target bits]], ...]``)."""
        form = self.cute_form()
        if form is not None:
            return {"bits": form[0], "base": form[1], "shift": form[2]}
        return {"matrix": self.matrix(), "xor": [[s, _bits(m)] for s, m in self.terms]}


def cute_pieces(swz: Swizzle) -> list[tuple[int, int, int]]:
    """The map as CuTe swizzles (bits, base, shift) whose XOR it is: runs of terms where
    source and target both step by one bit."""
    pairs = sorted((t, s) for s, m in swz.terms for t in _bits(m))
    pieces: list[list[int]] = []  # [bits, base, shift]
    for t, s in pairs:
        last = pieces[-1] if pieces else None
        if last and t == last[1] + last[0] and s - t == last[2] and s - t > last[0]:
            last[0] += 1
        else:
            pieces.append([1, t, s - t])
    return [(b, m, s) for b, m, s in pieces]


def _span(bits: Sequence[int]) -> str:
    """``7``, ``7-9`` or ``2, 5, 7-9``: bit positions as runs."""
    runs: list[list[int]] = []
    for b in sorted(set(bits)):
        if runs and b == runs[-1][1] + 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def bit_words(swz: Swizzle) -> str:
    """``offset bits 7-9 into bits 4-6``: what the map reads and writes."""
    return f"offset bits {_span(swz.sources)} into bits {_span(_bits(swz.targets))}"


def written(swz: Swizzle) -> str:
    """How a map is written: ``Swizzle<B,M,S>``, or CuTe swizzles joined by `` ^ ``."""
    if swz.identity:
        return "none"
    form = swz.cute_form()
    if form is not None:
        return f"Swizzle<{form[0]},{form[1]},{form[2]}>"
    return " ^ ".join(f"Swizzle<{b},{m},{s}>" for b, m, s in cute_pieces(swz))


TMA_SWIZZLES: dict[str, Swizzle] = {
    "32B": Swizzle(Swizzle.cute(1, 4, 3).terms, "32B"),
    "64B": Swizzle(Swizzle.cute(2, 4, 3).terms, "64B"),
    "128B": Swizzle(Swizzle.cute(3, 4, 3).terms, "128B"),
}


def tma_mode(swz: Swizzle | None) -> str | None:
    """The TMA mode a map is (``none``, ``32B``, ``64B``, ``128B``), None for no mode."""
    if swz is None or swz.identity:
        return "none"
    for name, mode in TMA_SWIZZLES.items():
        if mode.terms == swz.terms:
            return name
    return None


def parse_swizzle(text: str) -> Swizzle | None:
    """``none``, a TMA mode (``32B``, ``64B``, ``128B``), CuTe ``Swizzle<B,M,S>``, or
    CuTe swizzles joined by ``^`` (their XOR, each on the original offset).

    Raises ValueError with the accepted forms.
    """
    t = text.strip()
    if t.lower() == "none":
        return None
    for name, swz in TMA_SWIZZLES.items():
        if t.upper() == name:
            return swz
    parts = t.split("^")
    if len(parts) > MAX_TERMS:
        raise ValueError(f"a swizzle of more than {MAX_TERMS} parts: {shorten(text)!r}")
    pieces = []
    for part in parts:
        m = re.match(_CUTE, part.strip())
        if not m:
            raise ValueError(
                f"unknown swizzle {shorten(text)!r}; use none, 32B, 64B, 128B, "
                "Swizzle<bits,base,shift> or such swizzles joined by ^"
            )
        b, base, s = (int(g) for g in m.groups())
        try:
            pieces.append(Swizzle.cute(b, base, s))
        except ValueError as exc:
            raise ValueError(f"{part.strip()!r}: {exc}") from None
    if len(pieces) == 1:
        return pieces[0]
    terms: dict[int, int] = {}
    for piece in pieces:
        for src, mask in piece.terms:
            terms[src] = terms.get(src, 0) ^ mask
    return Swizzle.from_terms(terms, label=" ^ ".join(piece.label for piece in pieces))


def swizzle_label(swz: Swizzle | None) -> str:
    """How a swizzle (or none) is written: ``none``, ``128B``, ``Swizzle<3,4,4>``."""
    return "none" if swz is None else swz.label
