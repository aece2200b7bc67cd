"""The kernels an error lists for a user to choose one from, and the ``-k`` that picks each.

:func:`kernel_list` writes one line per kernel (demangled and mangled name); names alike for
long (a library's instantiations) are shown from a little before where they first differ.
Given the cubin's kernels, each line ends with ``-k FRAGMENT``: a short part of the kernel's
mangled name that no other kernel's names hold, which ``--kernel`` (:func:`kernel_forms`, the
rule of :func:`shmem_cli.trace.ncu.names.matching`) takes for that kernel alone. Mangled names
are letters, digits and ``_``: a fragment needs no quoting in a shell.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Protocol

from ...plumbing.errors import shorten

MAX_LISTED = 20  # kernels an error lists (the rest are counted)
#: what ends an error listing the kernels with their -k
USE_FRAGMENT = (
    "use the -k FRAGMENT its line ends with (a part of its mangled name that no other "
    "kernel's names hold), or its whole mangled name"
)
_BEFORE = 8  # characters a fragment starts before where its kernel's name differs


class Named(Protocol):
    """A kernel as --kernel knows it (:class:`shmem_cli.trace.kernel.cubin.Kernel`)."""

    @property
    def mangled(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def signature(self) -> str: ...


def kernel_forms(kernel: Named) -> tuple[str, str, str, str]:
    """The names ``--kernel`` matches: demangled, mangled, the whole signature, and the
    demangled name without its template arguments (``MatrixMulCUDA``)."""
    return kernel.name, kernel.mangled, kernel.signature, kernel.name.split("<", 1)[0]


def kernel_list(kernels: Sequence[Named], among: Sequence[Named] = ()) -> str:
    """One indented line per kernel: demangled and mangled name (cut at 200 and 80 characters;
    the first :data:`MAX_LISTED`, then how many more), and where ``among`` (all the cubin's
    kernels) is given, the ``-k`` that picks it from them."""
    shown = kernels[:MAX_LISTED]
    skip = _shared_start([k.name for k in shown]) if len(shown) > 1 else 0
    cut = _shared_start([k.mangled for k in shown]) if len(shown) > 1 else 0
    lines = []
    for k in shown:
        name = k.name if skip < 120 else "..." + k.name[skip - 40 :]
        mangled = k.mangled if cut < 60 else "..." + k.mangled[cut - 20 :]
        mangled = f"  ({shorten(mangled, 80)})" if k.mangled != k.name else ""
        pick = f"  -k {shlex.quote(fragment(k, among))}" if among else ""
        lines.append(f"  {shorten(name, 200)}{mangled}{pick}")
    if len(kernels) > MAX_LISTED:
        lines.append(f"  ... and {len(kernels) - MAX_LISTED:,} more")
    return "\n".join(lines)


def fragment(kernel: Named, among: Sequence[Named]) -> str:
    """The shortest part of ``kernel``'s mangled name that starts :data:`_BEFORE` characters
    before where it first differs from the most alike of ``among``'s other names, and that
    none of their names holds (spaces ignored, as --kernel ignores them); the whole mangled
    name where no such part is (it is one of its forms: ``--kernel`` takes it whole first)."""
    mangled = kernel.mangled
    others = [f.replace(" ", "") for k in among if k.mangled != mangled for f in kernel_forms(k)]
    if not others:
        return mangled
    differs = max(_shared_start([mangled, other]) for other in others)
    start = max(0, differs - _BEFORE)

    def alone(end: int) -> bool:
        part = mangled[start:end]
        return not any(part in other for other in others)

    low, high = differs + 1, len(mangled)  # a longer part is alone if a shorter one is
    if high < low or not alone(high):
        return mangled
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if alone(mid) else (mid + 1, high)
    return mangled[start:high]


def _shared_start(names: list[str]) -> int:
    """How many leading characters every one of ``names`` has in common."""
    first, last = min(names), max(names)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n
