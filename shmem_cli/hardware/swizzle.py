"""Swizzles: the XOR permutation of byte offsets inside an array, and their names.

A :class:`Swizzle` is CuTe's ``Swizzle<bits, base, shift>``: bits
``base+shift .. base+shift+bits-1`` of an in-array byte offset are XOR-ed into bits
``base .. base+bits-1``. The TMA modes 32B, 64B and 128B are three of them. An array
layout (:class:`shmem_cli.spec.layout.ArrayLayout`) composes its swizzle into the byte
address of every element; this module knows nothing of arrays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ..plumbing.errors import shorten

if TYPE_CHECKING:
    import numpy.typing as npt

# a string constraint: numpy.typing is not imported at run time (start-up)
Offset = TypeVar("Offset", int, "npt.NDArray[np.int64]")

_CUTE = re.compile(r"^(?:swizzle|s)?<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\Z", re.IGNORECASE)


@dataclass(frozen=True)
class Swizzle:
    """XOR swizzle of the byte offset inside an array (CuTe ``Swizzle<bits, base, shift>``)."""

    bits: int
    base: int
    shift: int
    label: str

    @property
    def period(self) -> int:
        """Bytes after which the pattern repeats; the array must start at a multiple."""
        return 1 << (self.base + self.shift + self.bits)

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
        return cls(bits, base, shift, f"Swizzle<{bits},{base},{shift}>")

    def apply(self, offset: Offset) -> Offset:
        """The swizzled byte offset (an int or an array of them)."""
        mask = ((1 << self.bits) - 1) << self.base
        return offset ^ ((offset >> self.shift) & mask)


TMA_SWIZZLES: dict[str, Swizzle] = {
    "32B": Swizzle(1, 4, 3, "32B"),
    "64B": Swizzle(2, 4, 3, "64B"),
    "128B": Swizzle(3, 4, 3, "128B"),
}


def parse_swizzle(text: str) -> Swizzle | None:
    """``none``, a TMA mode (``32B``, ``64B``, ``128B``) or CuTe ``Swizzle<B,M,S>``.

    Raises ValueError with the accepted forms.
    """
    t = text.strip()
    if t.lower() == "none":
        return None
    for name, swz in TMA_SWIZZLES.items():
        if t.upper() == name:
            return swz
    m = _CUTE.match(t)
    if not m:
        raise ValueError(
            f"unknown swizzle {shorten(text)!r}; "
            "use none, 32B, 64B, 128B or Swizzle<bits,base,shift>"
        )
    b, base, s = (int(g) for g in m.groups())
    try:
        return Swizzle.cute(b, base, s)
    except ValueError as exc:
        raise ValueError(f"{t!r}: {exc}") from None


def swizzle_label(swz: Swizzle | None) -> str:
    """How a swizzle (or none) is written: ``none``, ``128B``, ``Swizzle<3,4,4>``."""
    return "none" if swz is None else swz.label
