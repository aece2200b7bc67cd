"""A swizzle said in its user's terms: the index expression for the array's own element
type, CuTe ``Swizzle<B,M,S>`` on elements and on bytes, the TMA mode, Triton's
``swizzled_shared`` parameters, and the JSON form.

A map on byte offsets (:class:`~shmem_cli.hardware.swizzle.Swizzle`) read on element
indices shifts every bit down by ``log2(element bytes)``: ``Swizzle<3,4,3>`` on bytes
is ``Swizzle<3,0,3>`` on the index of a ``uint4`` array, ``Swizzle<3,2,3>`` on a
``float`` one. Writing the byte form into an index of another element type is the
mistake this module exists to prevent, so every expression names its element type.

Triton's ``swizzled_shared`` layout of a row-major tile with ``2^C``-element rows
XORs the row index bits ``P .. P+X-1`` into the column's ``vec``-group bits: on the
element index, CuTe ``Swizzle<X, log2(vec), C + P - log2(vec)>`` with ``perPhase =
2^P`` and ``maxPhase = 2^X``; a single CuTe swizzle of that shape has those
parameters.
"""

from __future__ import annotations

from typing import Any

from ..hardware.swizzle import Swizzle, cute_pieces, tma_mode, written
from ..plumbing.frozen import frozen


@frozen
class Triton:
    """Triton's ``swizzled_shared`` parameters of a row-major tile."""

    vec: int
    per_phase: int
    max_phase: int

    def __str__(self) -> str:
        return (
            f"swizzled_shared(vec={self.vec}, perPhase={self.per_phase}, "
            f"maxPhase={self.max_phase}, order=[1, 0])"
        )


@frozen
class SwizzleTerms:
    """One map, written every way a user may need it."""

    swizzle: Swizzle  # on byte offsets
    element: int  # bytes of the array's element (1 when unknown)
    element_type: str  # e.g. "float", "uint4", "4-byte element"
    on_elements: Swizzle | None  # the map on element indices (None: it splits elements)
    tma: str | None  # the TMA mode it is, if any
    triton: Triton | None

    @property
    def byte_form(self) -> str:
        return f"{written(self.swizzle)} on byte offsets"

    @property
    def element_form(self) -> str | None:
        if self.on_elements is None:
            return None
        return f"{written(self.on_elements)} on the {self.element_type} element index"

    def expression(self, index: str = "i") -> str:
        """``i ^ ((i >> 5) & 0x1f)``: the new element index (or byte offset ``o`` when the
        map splits elements)."""
        swz, var = (
            (self.on_elements, index)
            if self.on_elements is not None
            else (
                self.swizzle,
                "o",
            )
        )
        parts = [
            f"(({var} >> {shift}) & {((1 << bits) - 1) << base:#x})"
            for bits, base, shift in cute_pieces(swz)
        ]
        return " ^ ".join([var, *parts]) if parts else var

    def sentence(self, array: str, *, triton: bool = False) -> str:
        """The fix in one sentence (the index expression first: it is what gets typed);
        with ``triton``, Triton's parameters too (for a Triton kernel)."""
        mode = f"the TMA {self.tma} swizzle mode, " if self.tma not in (None, "none") else ""
        if self.on_elements is not None:
            head = (
                f"{mode}XOR the {self.element_type} element index i of {array}: {self.expression()}"
            )
            forms = f"{self.element_form}; {self.byte_form}"
        else:
            head = f"{mode}XOR the byte offset o inside {array}: {self.expression()}"
            forms = self.byte_form
        extra = f"; Triton {self.triton}" if triton and self.triton is not None else ""
        return f"{head} ({forms}{extra})"

    def to_json(self) -> dict[str, Any]:
        """Every way the map is written (its machine form is ``swizzle.to_json()``)."""
        out: dict[str, Any] = {"written": written(self.swizzle)}
        out["element_bytes"] = self.element
        if self.on_elements is not None:
            out["on_elements"] = self.on_elements.to_json()
            out["expression"] = self.expression()
        out["tma"] = self.tma
        if self.triton is not None:
            out["triton"] = {
                "vec": self.triton.vec,
                "perPhase": self.triton.per_phase,
                "maxPhase": self.triton.max_phase,
            }
        return out


def triton_params(on_elements: Swizzle | None, row_elements: int | None) -> Triton | None:
    """Triton's parameters when the element map is a single CuTe swizzle that a
    ``swizzled_shared`` layout of ``row_elements``-wide rows writes (module docstring)."""
    if on_elements is None or row_elements is None or row_elements & (row_elements - 1):
        return None
    form = on_elements.cute_form()
    if form is None:
        return None
    bits, base, shift = form
    c = row_elements.bit_length() - 1
    p = base + shift - c
    if p < 0 or base + bits > c:
        return None
    return Triton(vec=1 << base, per_phase=1 << p, max_phase=1 << bits)


def terms(
    swz: Swizzle,
    element: int | None,
    element_type: str | None = None,
    row_elements: int | None = None,
) -> SwizzleTerms:
    """``swz`` (on byte offsets) said for an array of ``element``-byte elements; with
    ``element`` None (the type is unknown) on byte offsets only, never on a guessed index."""
    on_elements = swz.on_elements(element) if element is not None else None
    return SwizzleTerms(
        swizzle=swz,
        element=element or 1,
        element_type=element_type or f"{element}-byte element",
        on_elements=on_elements,
        tma=tma_mode(swz),
        triton=triton_params(on_elements, row_elements),
    )
