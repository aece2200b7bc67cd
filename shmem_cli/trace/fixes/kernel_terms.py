"""A layout change said in the kernel's own terms.

A pad becomes the declaration with its last dimension padded
(``__shared__ float As[16][64 + 4]``), a swizzle the XOR to apply to the element
index (``i ^ ((i >> 5) & 0x18)``, CuTe ``Swizzle<2,3,5>`` on the element index); and
when the padded dimension is written with a macro or a template parameter
(``TILE_M + PAD``), the words name it and, for a macro, the ``shmem sweep`` that
gives the exact answer by compiling each value.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from ...analysis.swizzle_terms import terms
from ...cuda.nvcc_args import macro_spans
from .arrays import SharedArray
from .declared import Shape
from .relayout import Change

NVCC_ARG = "--nvcc-arg="  # how a launch's words give nvcc an argument

Say = Callable[[SharedArray, Shape | None, Change, int], tuple[str, str | None]]

# ptxas merges scalar shared accesses into LDS.64/LDS.128 only where it can prove the
# addresses consecutive: through an XOR on every element's index it does not (warp_sgemm
# compiled so reads As with 64 LDS instead of 16 LDS.128; tests/data/trace/fixes)
VECTOR_NOTE = (
    "; apply it to the index of the first element of each {width}-byte access and reach "
    "the others from there ((&{name}[swz(i)])[q]): with the XOR on every element's index "
    "ptxas no longer merges them into one access"
)


def _pad_words(array: SharedArray, shape: Shape | None, change: Change) -> str:
    if shape is not None:
        elems = change.pad_bytes // shape.element_bytes
        rows = array.size // change.pitch
        row = change.pitch // shape.element_bytes
        kind = shape.declaration.type
        if len(shape.sizes) >= 2:
            dims = "".join(f"[{s}]" for s in shape.sizes[:-1]) + f"[{shape.sizes[-1]} + {elems}]"
            return f"__shared__ {kind} {array.name}{dims}"
        return (
            f"__shared__ {kind} {array.name}[{rows} * ({row} + {elems})], element (r, c) at "
            f"{array.name}[r * ({row} + {elems}) + c]"
        )
    return (
        f"pad each {change.pitch}-byte row of {array.name} by {change.pad_bytes} bytes "
        f"({array.size // change.pitch} rows)"
    )


def _swizzle_words(array: SharedArray, shape: Shape | None, change: Change, widest: int) -> str:
    swz = change.swizzle
    assert swz is not None
    if shape is None:  # the element type is unknown: the byte offset, never a guessed index
        return terms(swz, None).sentence(array.name)
    row = shape.sizes[-1] if len(shape.sizes) >= 2 else None
    said = terms(swz, shape.element_bytes, shape.declaration.type, row)
    text = said.sentence(array.name)
    if said.on_elements is not None and len(shape.sizes) >= 2:
        names = "rcdefgh"[: len(shape.sizes)]
        parts = [f"{v} * {_stride(shape.sizes, k)}" for k, v in enumerate(names[:-1])]
        at = "".join(f"[{v}]" for v in names)
        text += f", with i = {' + '.join([*parts, names[-1]])} for {array.name}{at}"
    vector = widest > shape.element_bytes and swz.unit >= widest
    return text + (VECTOR_NOTE.format(width=widest, name=array.name) if vector else "")


def _stride(sizes: Sequence[int], k: int) -> int:
    out = 1
    for s in sizes[k + 1 :]:
        out *= s
    return out


def wording(kernel_name: str, source: str | None, launch: Sequence[str]) -> Say:
    """The ``say`` of :func:`shmem_cli.trace.suggest.suggest_kernel` for one kernel:
    ``source`` is the .cu file traced (None for a cubin), ``launch`` its launch options."""

    def say(
        array: SharedArray, shape: Shape | None, change: Change, widest: int
    ) -> tuple[str, str | None]:
        if change.kind == "swizzle":
            return _swizzle_words(array, shape, change, widest), None
        fix = _pad_words(array, shape, change)
        knob = shape.pad_knob if shape is not None else None
        if knob is None or shape is None:
            return fix, None
        name, kind, value = knob
        new = value + change.pad_bytes // shape.element_bytes
        if kind == "template parameter":
            return (
                f"{fix} ({name} {value} -> {new})",
                f"{array.name}'s row length comes from template parameter {name} of "
                f"{kernel_name}: instantiate it with {name} = {new} and trace that instance",
            )
        values = (
            "0..8"
            if new <= 8 and value <= 8
            else ",".join(str(v) for v in sorted({0, 1, 2, 4, 8, value, new}))
        )
        target = shlex.quote(source) if source is not None else "KERNEL.cu"
        rest = map(shlex.quote, _without_macro(launch, name))
        command = " ".join(["shmem sweep", target, f"--define {name}={values}", *rest])
        return (
            f"{fix} ({name} {value} -> {new})",
            f"{array.name}'s row length comes from macro {name}: compile and trace each "
            f"value for the exact counts: {command}",
        )

    return say


def _without_macro(words: Sequence[str], name: str) -> list[str]:
    """The launch words less the ``--nvcc-arg`` words that set or clear macro ``name`` (the
    sweep's ``--define`` sets it), in any spelling nvcc takes (:func:`macro_spans`:
    ``-DNAME=V``, ``-UNAME``, ``-D`` then ``NAME=V``, ``--define-macro=NAME``, ...)."""
    at = [k for k, word in enumerate(words) if word.startswith(NVCC_ARG)]
    args = [words[k].removeprefix(NVCC_ARG) for k in at]
    drop = {
        at[j]
        for first, last, macro in macro_spans(args)
        if macro == name
        for j in range(first, last + 1)
    }
    return [word for k, word in enumerate(words) if k not in drop]
