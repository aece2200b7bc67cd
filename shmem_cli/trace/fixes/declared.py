"""A shared array as the kernel's source declares it: element type, dimensions, and the
macros or template parameters the dimensions are written with.

``__shared__ float As[TILE_K][TILE_M + PAD];`` is found by the array's name in the
sources the line table names; its dimensions are evaluated with the file's object-like
``#define``s, the ``-D`` arguments of the compile and the kernel's template arguments
(``row_quads<2>`` binds ``template <int PAD>``). Only integer literals, names and the
operators ``+ - * / % << >>`` and parentheses are evaluated, by walking the parsed
expression; nothing is executed. The declaration is believed only when its size is
the array's size in the cubin.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence

from ...plumbing.frozen import frozen

ELEMENT_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "half2": 4, "__half2": 4,
    "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
    "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "double": 8,
    "float2": 8, "int2": 8, "uint2": 8, "float4": 16, "int4": 16, "uint4": 16, "double2": 16,
}  # fmt: skip

#: the longest size expression evaluated (a real one: ``TILE_M * (TILE_K + PAD)``): a longer
#: one is parsed whole first (200,000 characters of ``1+1+...``: a RecursionError traceback)
MAX_EXPRESSION = 1024
#: a value this large or larger is no array's size: not evaluated further (products of
#: macros multiplied 16 deep grew without bound)
MAX_VALUE = 1 << 64
_ALIGN = r"(?:(?:__align__|alignas)\s*\(\s*[^()]*\)\s*)*"
_DECL = re.compile(
    r"(?<![\w])__shared__\s+" + _ALIGN + r"((?:const\s+|volatile\s+)*(?:unsigned\s+|signed\s+)?"
    r"(?:long\s+long|[A-Za-z_][\w:]*))\s+" + _ALIGN + r"([^;{}]*?);",
    re.S,
)
_NAME_DIMS = re.compile(r"^\s*([A-Za-z_]\w*)\s*((?:\[[^\[\]]*\]\s*)+)$")
# (each quantifier's characters unlike its neighbour's: a run of blanks is read once, where
# "[^\n\\]*?[ \t]*" and "\s*(?:...|\s)*" backtracked in it, quadratic in a source's long line)
_DEFINE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n\\/]*(?:/(?!/)[^\n\\/]*)*)(?://.*)?$",
    re.M,
)
_TEMPLATE = re.compile(
    r"template\s*<([^<>]*)>(?:__global__|static|inline|\s)*void\s+"
    r"(?:__launch_bounds__\s*\([^()]*\)\s*)?(\w+)\s*\("
)
_IDENT = re.compile(r"[A-Za-z_]\w*")


@frozen
class Declaration:
    """``__shared__ TYPE NAME[D1][D2]...;`` as written, and where."""

    path: str
    line: int
    type: str
    name: str
    dims: tuple[str, ...]  # each dimension's expression, as written


@frozen
class Shape:
    """A declaration evaluated: the sizes, the element bytes, and the names in the last
    dimension that the user can change (macros and template parameters)."""

    declaration: Declaration
    sizes: tuple[int, ...]
    element_bytes: int
    knobs: tuple[tuple[str, str, int], ...]  # (name, "macro" | "template parameter", value)
    # the knob added to a row length (``TILE_M + PAD``: PAD), the one to sweep for padding
    pad_knob: tuple[str, str, int] | None = None

    @property
    def pitch(self) -> int:
        """Bytes of one row (the last dimension)."""
        return self.sizes[-1] * self.element_bytes


def find_declaration(sources: Sequence[tuple[str, str]], name: str) -> Declaration | None:
    """The ``__shared__`` declaration of ``name`` in the (path, text) sources (first found)."""
    return next(find_declarations(sources, name), None)


def find_declarations(sources: Sequence[tuple[str, str]], name: str) -> Iterator[Declaration]:
    """Every ``__shared__`` declaration of ``name`` in the (path, text) sources, in order
    (kernels of one file often each declare a ``tile``)."""
    for path, text in sources:
        for m in _DECL.finditer(text):
            for item in _split_top(m.group(2)):
                nd = _NAME_DIMS.match(item)
                if nd and nd.group(1) == name:
                    dims = tuple(d.strip() for d in re.findall(r"\[([^\[\]]*)\]", nd.group(2)))
                    line = text.count("\n", 0, m.start()) + 1
                    yield Declaration(path, line, " ".join(m.group(1).split()), name, dims)


def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[(" and 1 or (-1 if ch in "])" else 0)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


def macros(text: str, defines: Mapping[str, str]) -> dict[str, str]:
    """Object-like ``#define NAME VALUE`` of a source, then the compile's ``-D`` over them."""
    out = {m.group(1): m.group(2).strip() for m in _DEFINE.finditer(text)}
    out.update(defines)
    return out


def template_bindings(text: str, kernel_name: str) -> dict[str, str]:
    """``{"PAD": "2"}`` for kernel ``row_quads<2>`` of ``template <int PAD> ... row_quads(``."""
    base, _, args = kernel_name.partition("<")
    if not args:
        return {}
    values = [a.strip() for a in _split_top(args.rstrip(">"))]
    for m in _TEMPLATE.finditer(text):
        if m.group(2) != base:
            continue
        names = [p.split("=")[0].split()[-1] for p in _split_top(m.group(1)) if p.strip()]
        if len(names) == len(values):
            return dict(zip(names, values, strict=True))
    return {}


def evaluate(
    expr: str, names: Mapping[str, str], depth: int = 0, memo: dict[str, int | None] | None = None
) -> int | None:
    """The integer value of a C constant expression, names looked up in ``names`` (None
    when it cannot be evaluated). Each name is evaluated once (``memo``: four macros each
    adding the one before four times, 16 deep, were 4^16 walks), an expression longer than
    :data:`MAX_EXPRESSION` or a value of :data:`MAX_VALUE` or more is none (no array's size)."""
    if depth > 16 or len(expr) > MAX_EXPRESSION:
        return None
    text = re.sub(r"(?<=\d)[uUlL]+\b", "", expr).strip()
    try:
        tree = ast.parse(text, mode="eval")
        return _walk(tree.body, names, depth, {} if memo is None else memo)
    except (SyntaxError, ValueError, RecursionError):  # recursion: -------1
        return None


def _walk(
    node: ast.AST, names: Mapping[str, str], depth: int, memo: dict[str, int | None]
) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return int(node.value) if abs(node.value) < MAX_VALUE else None
    if isinstance(node, ast.Name):
        if node.id not in memo and node.id in names:
            memo[node.id] = None  # while it is evaluated: a macro naming itself has none
            memo[node.id] = evaluate(names[node.id], names, depth + 1, memo)
        return memo.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _walk(node.operand, names, depth, memo)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = _walk(node.left, names, depth, memo), _walk(node.right, names, depth, memo)
        if a is None or b is None:
            return None
        value = _operate(node.op, a, b)
        return value if value is None or abs(value) < MAX_VALUE else None
    return None


def _operate(op: ast.operator, a: int, b: int) -> int | None:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and b != 0:
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncation
        return q if not isinstance(op, ast.Mod) else a - q * b
    if isinstance(op, ast.LShift) and 0 <= b < 63:
        return a << b
    if isinstance(op, ast.RShift) and 0 <= b < 63:
        return a >> b
    return None


def shape_of(
    sources: Sequence[tuple[str, str]],
    name: str,
    size: int,
    *,
    kernel_name: str,
    defines: Mapping[str, str],
) -> Shape | None:
    """The declared shape of array ``name`` (``size`` bytes in the cubin): of its
    declarations that add up to ``size``, the first inside the kernel's own body, else the
    first; None when none does."""
    found = []
    for decl in find_declarations(sources, name):
        shape = _shape(sources, decl, size, kernel_name, defines)
        if shape is not None:
            found.append(shape)
    for shape in found:
        d = shape.declaration
        text = next((t for p, t in sources if p == d.path), "")
        if any(lo <= d.line <= hi for lo, hi in kernel_lines(text, kernel_name)):
            return shape
    return found[0] if found else None


def kernel_lines(text: str, kernel_name: str) -> list[tuple[int, int]]:
    """The (first, last) lines of each definition of the kernel in ``text``: from its name
    before ``(`` to the brace that closes its body (a linear scan, comments and strings
    not told apart: a stray brace there only narrows the preference)."""
    base = re.split(r"[<(]", kernel_name, maxsplit=1)[0].rsplit("::", 1)[-1].strip()
    if not base.isidentifier():
        return []
    out = []
    for m in re.finditer(rf"(?<![\w]){re.escape(base)}\s*\(", text):
        open_at = text.find("{", m.end())
        semi = text.find(";", m.end())
        if open_at < 0 or (0 <= semi < open_at):
            continue  # a call or a declaration, not a definition
        depth, k = 0, open_at
        while k < len(text):
            ch = text[k]
            depth += (ch == "{") - (ch == "}")
            if depth == 0:
                break
            k += 1
        out.append((text.count("\n", 0, m.start()) + 1, text.count("\n", 0, k) + 1))
    return out


def _shape(
    sources: Sequence[tuple[str, str]],
    decl: Declaration,
    size: int,
    kernel_name: str,
    defines: Mapping[str, str],
) -> Shape | None:
    if not decl.dims or any(not d for d in decl.dims):
        return None
    text = next((t for p, t in sources if p == decl.path), "")
    bound = template_bindings(text, kernel_name)
    names = {**macros(text, defines), **bound}
    sizes = [evaluate(d, names) for d in decl.dims]
    if any(s is None or s < 1 for s in sizes):
        return None
    count = 1
    for s in sizes:
        assert s is not None
        count *= s
    element = ELEMENT_BYTES.get(decl.type.replace("const ", "").replace("volatile ", ""))
    if element is None and size % count == 0:
        element = size // count
    if element is None or count * element != size:
        return None
    knobs = []
    for ident in dict.fromkeys(_IDENT.findall(" ".join(decl.dims))):
        value = evaluate(ident, names)
        if ident in bound and value is not None:
            knobs.append((ident, "template parameter", value))
        elif ident in names and value is not None:
            knobs.append((ident, "macro", value))
    addends = _addends(decl.dims[-1])
    added = [k for k in knobs if k[0] in addends]
    pad = min(added, key=lambda k: k[2]) if added else None
    return Shape(decl, tuple(s for s in sizes if s is not None), element, tuple(knobs), pad)


def _addends(expr: str) -> set[str]:
    """The names that are an operand of ``+`` anywhere in ``expr``."""
    if len(expr) > MAX_EXPRESSION:
        return set()
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            out |= {n.id for n in (node.left, node.right) if isinstance(n, ast.Name)}
    return out
