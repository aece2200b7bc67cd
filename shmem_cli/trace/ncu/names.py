"""A kernel's name as a user or Nsight Compute writes it, told equal to the name shmem knows
it by (:func:`matching`: the rule of ``--kernel``, for a cubin's kernels and a Triton cache's).

Nsight Compute's ``"Kernel Name"`` is, by default, the demangled signature in its own spelling:
a return type (``void``), namespaces, template arguments with C casts (``(int)128``,
``(unsigned int)4``, ``(bool)1``) and the parameter list, whose types may be written with the
template's own placeholders (``(T3 *, const T3 *, int)``); with ``--print-kernel-base
mangled`` it is the mangled name, and a Triton kernel is its plain name. shmem knows a kernel
by its demangled name without return type and parameters (``lab::transpose_tile<32, 0,
float>``, literals as c++filt writes them: ``32``, ``4u``, ``true``), its whole signature and
its mangled name. :func:`same_kernel` compares the forms after :func:`canonical`.

Nsight Compute's raw page (``--page raw``, and the launch list) writes a shorter form still:
no namespaces, no casts, ``bool`` arguments as ``0``/``1`` (``void flash_fwd_kernel<
Flash_fwd_kernel_traits<64, 128, 128, 4, 0, 0, half_t, ...>, 0, 1>(Flash_fwd_params)`` for
``flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false,
cutlass::half_t, ...>, false, true>``), and an enumerator argument as its number alone
(``MMA_64x64x16_F16F16F16_SS<1, 1, 1, 1>`` where the demangled name casts it to the enum:
``<(cute::SM90::GMMA::Major)1, ...>``, CuTe's wgmma atoms). Where a template argument is a
const reference, Nsight writes ``const Layout<...> &`` and c++filt ``Layout<...> const&``
(CuTe's TMA copy atoms): ``const`` is left out of both forms. An empty parameter pack at the
end of a template's arguments is ``<A, >`` in Nsight's spelling and ``<A>`` in c++filt's
(CUTLASS's grouped GEMM epilogue). A name written without any ``::``
is compared in that form too (:func:`bare`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# a C cast of an integral literal in a template argument: (int)128, (unsigned long long)4
_CAST = re.compile(
    r"\(\s*(?:const\s+)?(?:(?:unsigned|signed|long|short|int|char|bool|__int128)\s*)+\)\s*"
    r"(-?\d+)"
)
_BOOL_CAST = re.compile(r"\(\s*bool\s*\)\s*([01])\b")
_SUFFIX = re.compile(r"\b(-?\d+)(?:ull|ll|ul|lu|u|l)\b", re.IGNORECASE)
_RETURN = re.compile(r"^(?:void|int|float|double|unsigned int)\s+")
# a namespace (or class) qualifier before a name: cutlass::gemm::, (anonymous namespace)::
_QUALIFIER = re.compile(r"(?:\(anonymousnamespace\)|\b[A-Za-z_]\w*)::")
_CONST = re.compile(r"\bconst\b")
_BOOL_WORD = re.compile(r"\b(true|false)\b")
# once qualifiers are gone: a cast of a literal to a named type (an enum), (Major)1
_NAMED_CAST = re.compile(r"\([A-Za-z_]\w*\)(-?\d+)")


def _strip_parameters(name: str) -> str:
    """``f<1>(int *, int)`` -> ``f<1>``: the last top-level parenthesised group at the end."""
    text = name.rstrip()
    if not text.endswith(")"):
        return text
    depth = 0
    for k in range(len(text) - 1, -1, -1):
        ch = text[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                head = text[:k].rstrip()
                # a cast such as (int)3 inside template arguments never ends the name
                return head if head and not head.endswith(("<", ",")) else text
    return text


def canonical(name: str) -> str:
    """The name without return type, parameter list, casts, literal suffixes, ``const``,
    spaces and empty last template arguments (Nsight writes an empty pack as ``X<A, >``)."""
    text = _RETURN.sub("", name.strip())
    text = _strip_parameters(text)
    text = _BOOL_CAST.sub(lambda m: "true" if m.group(1) == "1" else "false", text)
    text = _CAST.sub(r"\1", text)
    text = _SUFFIX.sub(r"\1", text)
    return _CONST.sub("", text).replace(" ", "").replace(",>", ">")


def bare(name: str) -> str:
    """:func:`canonical`, then without namespace qualifiers, casts to an enum, and with
    ``bool`` arguments as ``1``/``0``: the raw page's spelling."""
    return _bare(canonical(name))


def _bare(canonical_name: str) -> str:
    text = _NAMED_CAST.sub(r"\1", _QUALIFIER.sub("", canonical_name))
    return _BOOL_WORD.sub(lambda m: "1" if m.group(1) == "true" else "0", text)


def same_kernel(table_name: str, forms: tuple[str, ...]) -> bool:
    """Whether Nsight Compute's ``table_name`` names the kernel shmem knows by ``forms``
    (its demangled name, its signature, its mangled name); a name without ``::`` is also
    compared in the raw page's spelling (:func:`bare`)."""
    if table_name.strip() in forms:
        return True
    mine = canonical(table_name)  # once: a table's name may be long (128 KiB)
    if mine in {canonical(f) for f in forms if f}:
        return True
    return "::" not in table_name and _bare(mine) in {bare(f) for f in forms if f}


def matcher(forms: tuple[str, ...]) -> Callable[[str], bool]:
    """:func:`same_kernel` against ``forms``, each distinct name judged once: an export
    repeats a kernel's name for every launch, and a name may be long (128 KiB)."""
    seen: dict[str, bool] = {}

    def match(name: str) -> bool:
        got = seen.get(name)
        if got is None:
            got = seen[name] = same_kernel(name, forms)
        return got

    return match


def matching(query: str, items: Sequence[T], forms: Callable[[T], tuple[str, ...]]) -> list[T]:
    """The ``items`` that ``query`` names, by the first of these ways that names any: one of
    an item's ``forms`` whole, a prefix of one, a part of one (spaces ignored in these three:
    ``MatrixMulCUDA<32>``, ``MatrixMul``, ``TmaWarpSpecializedCooperative``), or the name as
    Nsight Compute writes it (:func:`same_kernel`). More than one: ``query`` is ambiguous."""
    q = query.replace(" ", "")
    squeezed = [tuple(f.replace(" ", "") for f in forms(item)) for item in items]
    ways: tuple[Callable[[tuple[str, ...], T], bool], ...] = (
        lambda fs, _: q in fs,
        lambda fs, _: any(f.startswith(q) for f in fs),
        lambda fs, _: any(q in f for f in fs),
        lambda _, item: same_kernel(query, forms(item)),
    )
    for named in ways:
        found = [item for fs, item in zip(squeezed, items, strict=True) if named(fs, item)]
        if found:
            return found
    return []
