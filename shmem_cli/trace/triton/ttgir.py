"""A Triton kernel's TTGIR, read for what a launch needs: its parameters (names and types), the
tensor shapes that tell entries apart, and the Python file its first location names.

TTGIR comes from a cache anyone can commit, so every reading is linear in the text: the
patterns have no two unbounded parts that can match the same characters (a 4 MB
``tensor<1x1x1x...`` without its ``>`` used to take minutes), the work per character is the
regular expression engine's, not a Python loop's (64 MiB of ``tensor<1x`` took 10 s), a
type is at most :data:`MAX_TYPE` characters before it is matched, a parameter list at most
:data:`MAX_SIGNATURE` (past it, refused), and the Python file a ``#loc`` names is read
only inside the kernel's source tree (:mod:`shmem_cli.cuda.sources`): a ``#loc`` naming any
other file is ignored, never read or quoted.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError, SourcePos, shorten
from ...plumbing.frozen import frozen
from .metadata import TritonError

MAX_PYTHON_BYTES = 4 << 20
#: characters of a Python ``def``'s header read for its parameters (a real one: under a
#: kilobyte); only the header is parsed (:func:`python_names`)
MAX_DEF_HEADER = 64 << 10
#: ``def name(`` headers of one file tried, each tokenized up to :data:`MAX_DEF_HEADER`: a file
#: of 20,000 unclosed ``def softmax_rows(`` lines (360 KB) ran past 300 s, one header at a time
MAX_DEF_TRIES = 16
MAX_TYPE = 512  # characters of one parameter's type
MAX_SHAPES = 1000  # distinct tensor shapes kept
#: characters of a kernel's parameter list, ``(`` to ``)``: 32 for each of the 32,764 one-byte
#: parameters CUDA's largest parameter block holds (a real one is under a kilobyte); a list
#: that runs on past it is refused, not walked to the end of a 64 MiB file
MAX_SIGNATURE = 1 << 20

_FUNC = re.compile(r"tt\.func\s+(?:public\s+)?@([\w$.]+)\s*\(")
_ARG = re.compile(r"%([\w$.]+)\s*:\s*")
_LOC_NAME = re.compile(r'loc\(\s*"([^"]+)"\s*\(')
_POSITIONAL = re.compile(r"arg[0-9]+")  # an older TTGIR's name of a parameter: %arg0, %arg1
_FIRST_LOC = re.compile(r'^#loc\s*=\s*loc\("([^"\n]{1,4096})":(\d{1,9}):\d{1,9}\)', re.M)
_PARENS = re.compile(r'["()]')  # what a parameter list's nesting turns on
_TENSOR = "tensor<"
# a tensor's shape: the dimensions after "tensor<" (64x64x), the last "x" left out
_SHAPE = re.compile(r"tensor<((?:\d{1,12}x){0,15}\d{1,12})x")
#: characters of TTGIR searched for shapes at a time (:func:`tensor_shapes`)
SHAPE_CHUNK = 1 << 20
_TYPE_END = re.compile(r"\s(?=\{|loc\()")  # where a parameter's type ends
_DIVISIBILITY = re.compile(r"\{[^{}]*\btt\.divisibility\s*=\s*([0-9]{1,6})\b")
_POINTER = re.compile(r"!tt\.ptr<(\w+)(?:,\d+)?>")  # whitespace removed first
# a host-side tensor descriptor (TensorDescriptor), lowered to TMA: a CUtensorMap by value
_DESC = re.compile(r"!tt\.tensordesc<tensor<((?:\d{1,12}x){1,16})\w+(?:,[^<>]*)?>>")
DESC_TYPE = "CUtensorMap"
# Triton 3.2/3.3's experimental host-side descriptor: an i8 pointer the host fills as a map
_NV_TMA = re.compile(r"\{[^{}]*\btt\.nv_tma_desc\s*=\s*1\b")
# TTGIR scalar types -> (C type, bytes)
SCALARS = {
    "i1": ("bool", 1),
    "i8": ("int8_t", 1),
    "i16": ("int16_t", 2),
    "i32": ("int32_t", 4),
    "i64": ("int64_t", 8),
    "f16": ("half", 2),
    "bf16": ("bfloat16", 2),
    "f32": ("float", 4),
    "f64": ("double", 8),
}


@frozen
class TritonParam:
    """One parameter of the kernel as Triton compiled it."""

    name: str
    ir_type: str  # as the TTGIR writes it: !tt.ptr<f16>, i32, f32
    c_type: str  # float16*, int32_t, float
    hidden: bool = False  # one of Triton's scratch pointers
    #: an integer the entry was compiled for multiples of (``tt.divisibility``, which Triton's
    #: JIT sets where the call's value was a multiple of 16); 1 where none is said
    divisible: int = 1

    @property
    def is_pointer(self) -> bool:
        return self.c_type.endswith("*")

    @property
    def is_map(self) -> bool:
        """A 128-byte CUtensorMap by value: a host-side tensor descriptor (``is_desc``) or
        Triton 3.2/3.3's experimental one (``nvTmaDesc``, no shape or strides after it)."""
        return self.c_type == DESC_TYPE

    @property
    def is_desc(self) -> bool:
        """A host-side tensor descriptor (TensorDescriptor), its shape and strides after it."""
        return self.is_map and desc_rank(self) > 0

    @property
    def is_float(self) -> bool:
        return self.c_type in ("half", "bfloat16", "float", "double")


def _compact(ir_type: str) -> str:
    """The type without whitespace (``!tt.ptr< f16 , 1 >`` -> ``!tt.ptr<f16,1>``)."""
    return "".join(ir_type.split())


def tensor_shapes(text: str) -> tuple[str, ...]:
    """The distinct tensor shapes of the text (``1024``, ``64x64``), in order of first use.
    The text is searched once, in pieces of about :data:`SHAPE_CHUNK` characters, each cut
    just before a ``tensor<`` (no shape is cut in two): a piece's shapes are found and told
    apart by the regular expression engine and the dict, not one by one in Python (64 MiB of
    ``tensor<1x`` is 7 million shapes)."""
    shapes: dict[str, None] = {}
    start = 0
    while start < len(text) and len(shapes) < MAX_SHAPES:
        end = text.find(_TENSOR, start + SHAPE_CHUNK)
        end = len(text) if end < 0 else end
        for shape in dict.fromkeys(_SHAPE.findall(text, start, end)):
            if len(shapes) >= MAX_SHAPES:
                break
            shapes.setdefault(shape, None)
        start = end
    return tuple(shapes)


def short_type(ir_type: str) -> str:
    """``*f16`` for ``!tt.ptr<f16>``, as Triton's signatures write it; scalars as they are."""
    pointer = _POINTER.fullmatch(_compact(ir_type)) if len(ir_type) <= MAX_TYPE else None
    return "*" + pointer.group(1) if pointer else shorten(ir_type)


def ttgir_params(text: str, name: str, where: Path) -> tuple[TritonParam, ...]:
    """The parameters of ``tt.func public @name(...)`` in TTGIR text."""
    for m in _FUNC.finditer(text):
        if m.group(1) != name:
            continue
        start = m.end() - 1
        end = _closing(text, start, start + MAX_SIGNATURE)
        if end is None and len(text) > start + MAX_SIGNATURE:
            raise TritonError(
                f"the parameter list of @{shorten(name)} runs on past {MAX_SIGNATURE:,} "
                "characters without its closing ')' (a real one is under a kilobyte): not a "
                "TTGIR Triton wrote; use the entry as Triton wrote it",
                where,
                _position(text, start),
            )
        if end is None:
            raise TritonError(
                f"the parameter list of @{shorten(name)} is not closed: the file ends before "
                "its ')' (a cut or damaged TTGIR; use the entry as Triton wrote it)",
                where,
                _position(text, start),
            )
        inner = text[start + 1 : end]
        pieces = _split_args(inner)
        return _desc_parts(tuple(_param(p, where, text, start + 1 + a) for a, p in pieces))
    found = sorted({m.group(1) for m in _FUNC.finditer(text)})
    held = ", ".join("@" + shorten(f) for f in found[:8]) + (", ..." if len(found) > 8 else "")
    raise TritonError(
        f"the TTGIR has no function @{shorten(name)}, the kernel the entry's .json names ("
        + (
            f"it has {held}: the entry's files come from different compiles"
            if found
            else "it has no function at all: not a TTGIR Triton wrote"
        )
        + "); give an entry folder as Triton wrote it",
        where,
    )


def _position(text: str, at: int) -> SourcePos:
    """The 1-based line and column of ``text[at]``."""
    return SourcePos(text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at))


def desc_rank(param: TritonParam) -> int:
    """The rank of a tensor descriptor parameter (its block's dimensions)."""
    m = _DESC.fullmatch(_compact(param.ir_type)) if len(param.ir_type) <= MAX_TYPE else None
    return m.group(1).count("x") if m else 0


def _desc_parts(params: tuple[TritonParam, ...]) -> tuple[TritonParam, ...]:
    """Names for the scalars Triton passes after each descriptor (its shape as i32 and its
    strides as i64, all named after the descriptor in the TTGIR): ``a_desc.shape0``, ..."""
    out = list(params)
    for i, p in enumerate(params):
        rank = desc_rank(p)
        if not rank:
            continue
        parts = [f"shape{k}" for k in range(rank)] + [f"stride{k}" for k in range(rank)]
        for k, part in enumerate(parts):
            j = i + 1 + k
            if j < len(out) and out[j].name == p.name:
                out[j] = TritonParam(f"{p.name}.{part}", out[j].ir_type, out[j].c_type)
    return tuple(out)


def named(names: Sequence[str], params: tuple[TritonParam, ...]) -> tuple[TritonParam, ...] | None:
    """``params`` named, in order, from a Python ``def``'s ``names`` (an older TTGIR's
    ``%arg0``...): a host-side descriptor takes one name, and the shape and stride parameters
    Triton passes after it are named for it (``a_desc.shape0``); None where the counts differ."""
    out: list[TritonParam] = []
    for name in names:
        if len(out) == len(params):
            return None
        p = params[len(out)]
        rank = desc_rank(p)
        parts = [f"shape{k}" for k in range(rank)] + [f"stride{k}" for k in range(rank)]
        if len(out) + 1 + len(parts) > len(params):
            return None
        out.append(TritonParam(name, p.ir_type, p.c_type, divisible=p.divisible))
        for part in parts:
            q = params[len(out)]
            out.append(TritonParam(f"{name}.{part}", q.ir_type, q.c_type))
    return tuple(out) if len(out) == len(params) else None


def _closing(text: str, open_paren: int, end: int) -> int | None:
    """Where the ``)`` that closes ``text[open_paren]`` is, looked for before ``end`` (parentheses
    inside quotes do not count); None if not there. Only quotes and parentheses are visited."""
    depth = 0
    quoted = False
    for m in _PARENS.finditer(text, open_paren, end):
        ch = m.group()
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return None


def _split_args(inner: str) -> list[tuple[int, str]]:
    """``inner`` split at the commas that start a new ``%name:`` argument: (offset in
    ``inner``, text) of each."""
    starts = [m.start() for m in _ARG.finditer(inner)]
    if not starts:
        return []  # no parameters (or none this reader can take)
    return [
        (a, inner[a:b].strip().rstrip(","))
        for a, b in zip(starts, [*starts[1:], len(inner)], strict=True)
    ]


def _param(piece: str, where: Path, text: str, at: int) -> TritonParam:
    """The parameter ``piece``, which starts at ``text[at]`` (errors are placed there)."""
    m = _ARG.match(piece)
    if m is None:
        raise TritonError(
            f"cannot read the TTGIR parameter {shorten(piece)!r}", where, _position(text, at)
        )
    rest = piece[m.end() :]
    end = _TYPE_END.search(rest)
    ir_type = (rest[: end.start()] if end else rest).strip()
    loc = _LOC_NAME.search(rest)
    name = loc.group(1) if loc else m.group(1)
    compact = _compact(ir_type) if len(ir_type) <= MAX_TYPE else ""
    pointer = _POINTER.fullmatch(compact)
    if _DESC.fullmatch(compact) or (pointer and _NV_TMA.search(rest)):
        c_type = DESC_TYPE
    elif pointer:
        element = SCALARS.get(pointer.group(1), (pointer.group(1), 0))[0]
        c_type = {"half": "float16", "bfloat16": "bfloat16"}.get(element, element) + "*"
    elif compact in SCALARS:
        c_type = SCALARS[compact][0]
        whole = _DIVISIBILITY.search(rest) if compact.startswith("i") else None
        if whole is not None and int(whole.group(1)) > 1:
            return TritonParam(name, ir_type, c_type, divisible=int(whole.group(1)))
    else:
        type_at = at + m.end() + len(rest) - len(rest.lstrip())
        raise TritonError(
            f"parameter {shorten(name)} has the type {shorten(ir_type)}, which shmem cannot pass "
            "yet (tuples, descriptors of other forms than !tt.tensordesc<tensor<...>>)",
            where,
            _position(text, type_at),
        )
    return TritonParam(name, ir_type, c_type)


def unnamed(names: Iterable[str]) -> bool:
    """Whether the TTGIR names none of these parameters (an older Triton, 3.2 to 3.4, writes
    ``%arg0``, ``%arg1``, ...): their names then come from the Python ``def``
    (:func:`python_names`)."""
    listed = list(names)
    return bool(listed) and all(_POSITIONAL.fullmatch(n) for n in listed)


def def_file(ttgir: str) -> str | None:
    """The Python file the TTGIR's first location names (where the kernel's ``def`` is)."""
    first = _FIRST_LOC.search(ttgir)
    return first.group(1) if first is not None else None


def python_names(
    ttgir: str, name: str, folder: Path, allowed: Callable[[Path], bool]
) -> tuple[str, ...] | None:
    """The parameters of the Python ``def`` the TTGIR's first location names (older Triton),
    less the ``tl.constexpr`` ones; None where the file is not found or not read. The file is
    looked for where it was compiled, then by its trailing path parts under the current folder
    and the entry's; only a file ``allowed`` takes (inside the source tree) is read."""
    from ...cuda.named_sources import locate_source

    first = _FIRST_LOC.search(ttgir)
    if first is None:
        return None
    found = locate_source(first.group(1), [Path.cwd(), folder], allowed)
    if found is None:
        return None
    try:
        source = read_bounded(found, MAX_PYTHON_BYTES, what="Python source")
    except ShmemError:
        return None  # a file that cannot be read: the parameters keep the TTGIR's names
    node = _def_header(source.decode("utf-8", errors="replace"), name)
    if node is None:
        return None
    return tuple(
        a.arg
        for a in node.args.args
        if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))
    )


def _def_header(source: str, name: str) -> ast.FunctionDef | None:
    """The first ``def name(...):`` of ``source`` that Python reads, its header alone parsed
    (:data:`MAX_DEF_HEADER`), not the file: 4 MiB of Python parsed whole held 2.5 GB; of the
    first :data:`MAX_DEF_TRIES` such headers."""
    pattern = re.compile(rf"^([ \t]*)def[ \t]+{re.escape(name)}[ \t]*\(", re.M)
    for m in itertools.islice(pattern.finditer(source), MAX_DEF_TRIES):
        piece = source[m.end(1) : m.start() + MAX_DEF_HEADER]
        end = _header_end(piece)
        try:
            tree = ast.parse(piece[:end] + " pass") if end is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if tree is not None and tree.body and isinstance(tree.body[0], ast.FunctionDef):
            return tree.body[0]
    return None


def _header_end(piece: str) -> int | None:
    """Just past the colon that ends the ``def`` header at the start of ``piece`` (the first
    outside brackets), or None where the piece ends first or is not Python."""
    starts = [0]
    for line in piece.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(piece).readline):
            if token.type != tokenize.OP:
                continue
            depth += (token.string in "([{") - (token.string in ")]}")
            if token.string == ":" and depth == 0:
                row, column = token.end
                return starts[row - 1] + column
    except (tokenize.TokenError, SyntaxError):  # a string cut by the piece's end, a tab
        return None
    return None
