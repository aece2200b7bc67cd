"""Parameter names of a kernel, from a light reading of its CUDA source.

The cubin knows each parameter's position, offset and size but not its name.
``--arg wA=64`` needs the name, so the source is searched for the kernel's
``__global__`` declaration: ``[template <...>] __global__ void [attributes]
NAME(params)``. Comments and conditional directives (``#ifdef``, ``#endif``) are
ignored; parameter declarators are split at top-level commas and the name is the last
identifier of each (``const float *__restrict__ A`` -> ``A``). A library may spell the
keywords with macros (CUTLASS: ``#define CUTLASS_GLOBAL __global__ static``, and
``CUTLASS_GRID_CONSTANT`` for ``__grid_constant__`` or nothing): an object-like macro
that any source text defines as ``__global__`` counts as ``__global__``, and one defined
as nothing or as attributes only is skipped in a declarator. When nothing fits (a macro
builds the signature, or the parameter count differs from the cubin's) the names are
simply unknown.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

_COMMENT_OPEN = re.compile(r"//|/\*")
#: an object-like macro's definition: its name and what it expands to
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])(.*)$", re.M)
_CONDITIONAL = re.compile(
    r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b.*$", re.M
)
_WORD = re.compile(r"[A-Za-z_]\w*")
_ATTRIBUTE = re.compile(r"__\w+__")  # __grid_constant__, __restrict__, ...
MACRO_ROUNDS = 4  # how deep a macro for __global__ may name another
#: above this many kernel names, a text's words are listed once instead of each name sought
MAX_NAMES_SOUGHT = 32
#: how far a declaration may reach: back to its ``__global__``, on to its closing ``)``
DECLARATION_REACH = 4096
PARAMETERS_REACH = 65536
MAX_CANDIDATES = 1000  # places that look like ``name(`` examined per source
#: characters the scans of :func:`param_names` look at, back to a declaration's start and on
#: to its closing parenthesis, over every candidate of every source: each may reach 4 KiB
#: back and 64 KiB on, so a source of 1,000 unclosed ``name(`` took 18 s (and 2,000 of them,
#: hours); past the budget the names found so far are the answer
MAX_SCAN = 16 << 20
_IDENT = re.compile(r"[A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*")
QUALIFIERS = {
    "const",
    "volatile",
    "__restrict__",
    "__restrict",
    "restrict",
    "struct",
    "class",
    "typename",
    "enum",
    "__grid_constant__",
}
TYPE_WORDS = {
    "void",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "unsigned",
    "signed",
    "size_t",
    "half",
    "__half",
    "__nv_bfloat16",
}


def base_name(kernel_name: str) -> str:
    """``MatrixMulCUDA`` from ``ns::MatrixMulCUDA<32>``: the identifier the source declares."""
    depth = 0
    plain = []
    for ch in kernel_name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            plain.append(ch)
    return "".join(plain).split("::")[-1].strip()


def _strip_template_args(text: str) -> str:
    out = []
    depth = 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def split_top_level(text: str) -> list[str]:
    """``text`` split at commas outside (), [], {} and <>."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def declarator_name(param: str, attributes: Collection[str] = ()) -> str | None:
    """The name a parameter declaration gives (None when it gives none); the words of
    ``attributes`` (macros for attributes, :func:`declaration_macros`) are skipped."""
    text = param.split("=", 1)[0]
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\s*::\s*", "::", _strip_template_args(text))
    skipped = QUALIFIERS.union(attributes)
    words: list[str] = [w for w in _IDENT.findall(text) if w not in skipped]
    if len(words) < 2 or words[-1] in TYPE_WORDS:
        return None
    return words[-1]


def strip_comments(text: str) -> str:
    """``text`` with each comment replaced by a space, in one pass (an unclosed ``/*``
    ends the text)."""
    out: list[str] = []
    i = 0
    while True:
        m = _COMMENT_OPEN.search(text, i)
        if m is None:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.start()])
        close = "\n" if m.group() == "//" else "*/"
        j = text.find(close, m.end())
        i = len(text) if j < 0 else (j if close == "\n" else j + 2)
        out.append(" ")


def declaration_macros(codes: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The words that say ``__global__`` in ``codes`` (comments stripped): the keyword and
    each object-like macro defined as it (with other words too, or as another such macro,
    :data:`MACRO_ROUNDS` deep); and the macros every definition of which is empty or
    attributes only (``__grid_constant__``)."""
    expansions: dict[str, list[str]] = {}
    for code in codes:
        for m in _DEFINE.finditer(code):
            expansions.setdefault(m[1], []).append(m[2])
    words = {n: [_WORD.findall(d) for d in defs] for n, defs in expansions.items()}
    kernel = {"__global__"}
    for _ in range(MACRO_ROUNDS):
        more = {n for n, defs in words.items() if any(kernel.intersection(d) for d in defs)}
        if more <= kernel:
            break
        kernel |= more
    attributes = {
        n
        for n, defs in expansions.items()
        if all(_ATTRIBUTE.fullmatch(t) for d in defs for t in d.split())
    }
    return frozenset(kernel), frozenset(attributes - kernel)


def naming_text(text: str, names: Collection[str]) -> str | None:
    """What a library file's ``text`` gives :func:`param_names` for kernels of the base
    ``names``: all of it where it mentions one of them, else its definitions of macros
    for ``__global__`` (the declaring file includes them), else None."""
    if len(names) <= MAX_NAMES_SOUGHT:
        mentioned = any(n in text for n in names)
    else:
        mentioned = not set(names).isdisjoint(_WORD.findall(text))
    if mentioned:
        return text
    if "__global__" not in text:
        return None
    code = strip_comments(text)
    found = [m[0] for m in _DEFINE.finditer(code) if "__global__" in _WORD.findall(m[2])]
    return "\n".join(found) or None


def _parameter_text(code: str, open_paren: int, reach: int) -> tuple[str | None, int]:
    """The text inside the parentheses opened at ``open_paren`` (None if they do not close
    within ``reach`` characters), and the characters looked at."""
    depth = 0
    stop = min(len(code), open_paren + reach)
    for k in range(open_paren, stop):
        if code[k] == "(":
            depth += 1
        elif code[k] == ")":
            depth -= 1
            if depth == 0:
                return code[open_paren + 1 : k], k + 1 - open_paren
    return None, stop - open_paren


def _statement_start(code: str, lo: int, end: int) -> int:
    """The position of the ``;``, ``{`` or ``}`` that ends what precedes ``code[lo:end]``'s
    declaration (``lo - 1`` if none): braces inside parentheses do not count, as in CuTe's
    ``__launch_bounds__(decltype(size(CThreadLayout{}))::value)``."""
    depth = 0
    for k in range(end - 1, lo - 1, -1):
        c = code[k]
        if c == ")":
            depth += 1
        elif c == "(":
            depth = max(0, depth - 1)
        elif depth == 0 and c in ";{}":
            return k
    return lo - 1


def param_names(sources: Iterable[str], kernel_name: str, count: int) -> list[str | None] | None:
    """The names of the ``count`` parameters of ``kernel_name`` in the first source text
    that declares it as ``__global__`` with that many parameters, else None."""
    found = param_declarations(sources, kernel_name, count)
    return None if found is None else [name for _, name in found]


_RESTRICT = re.compile(r"\b(?:__restrict__|__restrict|restrict)\b")
_TOP_CONST = re.compile(r"\*(?:\s*\b(?:const|volatile)\b)+\s*$")


def declared_type(param: str, name: str | None) -> str | None:
    """A parameter declaration's type: its text less the name and any default
    (``const float *in`` -> ``const float *``); None where it gives no name."""
    if name is None:
        return None
    text = param.split("=", 1)[0]
    at = text.rfind(name)
    if at < 0 or "[" in text[at:]:  # float a[4]: an array, not a type with a name after it
        return None
    kept = _RESTRICT.sub(" ", text[:at] + text[at + len(name) :])
    kept = _TOP_CONST.sub("*", kept)  # float *const p: the pointer's own const, no matter
    return " ".join(kept.split()) or None


def param_declarations(
    sources: Iterable[str], kernel_name: str, count: int
) -> list[tuple[str, str | None]] | None:
    """:func:`param_names`' declaration: each parameter's text and name."""
    base = base_name(kernel_name)
    if not base:
        return None
    pattern = re.compile(r"\b" + re.escape(base) + r"\s*\(")
    best: list[tuple[str, str | None]] | None = None
    codes = [_CONDITIONAL.sub("", strip_comments(source)) for source in sources]
    kernel_words, attributes = declaration_macros(codes)
    scanned = 0
    for code in codes:
        for n, m in enumerate(pattern.finditer(code)):
            if n >= MAX_CANDIDATES or scanned >= MAX_SCAN:
                break
            lo = max(0, m.start() - min(DECLARATION_REACH, MAX_SCAN - scanned))
            start = _statement_start(code, lo, m.start())
            scanned += m.start() - start
            directive = code.rfind("#", lo, m.start())  # the window starts past its line
            if directive >= 0:
                end = code.find("\n", directive, m.start())
                start = max(start, m.start() if end < 0 else end)
            if kernel_words.isdisjoint(_WORD.findall(code, start + 1, m.start())):
                continue
            reach = min(PARAMETERS_REACH, max(0, MAX_SCAN - scanned))
            inner, looked = _parameter_text(code, m.end() - 1, reach)
            scanned += looked
            if inner is None:
                continue
            params = [p for p in split_top_level(inner) if p.strip() not in ("", "void")]
            if len(params) != count:
                continue
            named = [(p, declarator_name(p, attributes)) for p in params]
            if all(n is not None for _, n in named):
                return named
            best = best or named
    return best
