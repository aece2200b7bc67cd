"""Launch text to numbers: block and grid sizes, and the bytes of a by-value argument.

Only ASCII digits are numbers (``str.isdigit`` also takes superscripts and other scripts'
digits, which ``int`` then refuses), and a number's length is bounded before it is converted
(a 5,000-digit size is refused in words, not by Python's digit limit). A block or grid is
checked in one place, :func:`check_dims`, whoever gives it: the command line, a spec's
``kernel:``, the Python API or a Triton entry's metadata.
"""

from __future__ import annotations

import math
import re
import struct

from ...hardware.arch import DEFAULT_ARCH, PROFILES
from ...plumbing.errors import ShmemError, shorten
from . import tensormap, zeros
from .c_types import BF16, FLOAT_VECTORS, FLOATING, INTEGRAL, scalar_of
from .zeros import ZEROS

#: the most threads a block may have: the default architecture profile's
MAX_BLOCK_THREADS = PROFILES[DEFAULT_ARCH].max_threads
#: CUDA's largest grid, per axis (x, y, z): any grid a launch may have can be given (the
#: trace runs the whole grid where it fits its budget, else a sample: trace/emulator/grid.py)
MAX_GRID_DIMS = ((1 << 31) - 1, 65535, 65535)
MAX_GRID_BLOCKS = MAX_GRID_DIMS[0] * MAX_GRID_DIMS[1] * MAX_GRID_DIMS[2]
#: the most CTAs of a thread-block cluster (16 with the non-portable attribute; 8 portable)
MAX_CLUSTER_CTAS = 16
#: the most values of one ``--const`` or ``--memory`` ``TYPE:v,v,...`` (a spec's too): a
#: larger table is a file (``@FILE``)
MAX_CONST_VALUES = 1 << 16
#: the most ``--memory`` ranges of one launch (a spec's ``kernel.memory`` keys too)
MAX_MEMORY_RANGES = 1024
#: what to do with more
JOIN_RANGES = "join neighbouring ranges into one @FILE each (the bytes between them included)"

# ASCII digits only (str.isdigit and \d take superscripts and other scripts' digits)
_INT = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)")  # at most 64 characters: below
_FLOAT = re.compile(
    r"^[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]{1,6})?\Z|^[+-]?(inf|nan)\Z", re.I
)
_DIM = re.compile(r"[0-9]{1,10}\Z")
_FLOAT_FORMAT = {2: "<e", 4: "<f", 8: "<d"}


class LaunchError(ShmemError):
    """A bad launch: a size, an ``--arg`` or a buffer file (code ``invalid-launch``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid-launch")


def parse_dims(text: str, option: str, *, limit: int) -> tuple[int, int, int]:
    """``X[,Y[,Z]]`` (also ``XxYxZ``, or a Python tuple as a Triton launch writes its grid:
    ``(64,)``, ``(8, 8)``) as three positive sizes whose product is at most ``limit``."""
    plain = text.strip()
    if plain[:1] + plain[-1:] in ("()", "[]"):
        plain = plain[1:-1].strip()
    plain = plain.removesuffix(",").rstrip()  # (64,): a one-element tuple
    parts = [p.strip() for p in re.split(r"[,x]", plain)] if len(text) <= 64 else []
    hexadecimal = re.match(r"\s*(0[xX][0-9a-fA-F]{1,8})\b", text)
    if hexadecimal:  # 0x20 was read as 0 by 20: "sizes must be at least 1, got 0,20"
        written = hexadecimal.group(1)
        raise LaunchError(
            f"{option} {shorten(text)!r}: sizes are decimal ('x' separates them, as in 32x8): "
            f"write {int(written, 16)} for {written}"
        )
    if not 1 <= len(parts) <= 3 or not all(_DIM.match(p) for p in parts):
        raise LaunchError(
            f"{option} expects X[,Y[,Z]] (positive integers in ASCII digits), got {shorten(text)!r}"
        )
    dims = [int(p) for p in parts] + [1] * (3 - len(parts))
    return check_dims((dims[0], dims[1], dims[2]), option, limit=limit)


def check_dims(dims: tuple[int, int, int], option: str, *, limit: int) -> tuple[int, int, int]:
    """Three sizes, each at least 1 and their product at most ``limit``: the one check of a
    block or grid, whoever gives it (the command line, a spec, the Python API, a Triton
    entry's metadata)."""
    if min(dims) < 1:
        raise LaunchError(f"{option} sizes must be at least 1, got {_said(dims)}")
    if limit == MAX_GRID_BLOCKS:
        for axis, size, most in zip("xyz", dims, MAX_GRID_DIMS, strict=True):
            if size > most:
                raise LaunchError(
                    f"{option} {_said(dims)}: {axis} is at most {most:,} (CUDA's largest grid)"
                )
    total = dims[0] * dims[1] * dims[2]
    if total > limit:
        count = f"{total:,}" if total.bit_length() <= 64 else "more than 2^64"
        raise LaunchError(f"{option} {_said(dims)} is {count} in all; the most is {limit:,}")
    return dims


def check_whole_clusters(
    grid: tuple[int, int, int],
    cluster: tuple[int, int, int],
    *,
    declared: bool = False,
    option: str = "--grid",
) -> None:
    """A grid made of whole clusters, as CUDA launches them; the refusal says where the
    cluster came from (``declared``: the kernel's ``__cluster_dims__``, which the user may
    not have typed) and the nearest grid of whole clusters to give as ``option``."""
    whose = ", the kernel's __cluster_dims__" if declared else ""
    for axis, g, c in zip("xyz", grid, cluster, strict=True):
        if g % c:
            w = [-(-n // m) * m for n, m in zip(grid, cluster, strict=True)]
            raise LaunchError(
                f"the grid's {axis} ({g:,}) is not a multiple of the cluster's ({c}{whose}): "
                f"CUDA launches whole clusters only; give {option} {_said((w[0], w[1], w[2]))} "
                "(or another multiple of the cluster)"
            )


def _said(dims: tuple[int, int, int]) -> str:
    """``64,32`` for (64, 32, 1); a size of thousands of digits is cut."""
    shown = list(dims)
    while len(shown) > 1 and shown[-1] == 1:
        shown.pop()
    return shorten(",".join(str(d) if d.bit_length() <= 64 else "(huge)" for d in shown))


def as_typed(text: str, size: int, ctype: str | None) -> str:
    """``text`` as a parameter of type ``ctype`` (``size`` bytes) takes it: a decimal integer
    for a floating one is that number as a float (``1`` -> ``1.0``, :data:`FLOATING`), converted
    from the integer as C++ converts it: ``-0`` is 0, so +0.0 (one too long stays as given)."""
    t = text.strip()
    vector = _vector(ctype, size)
    if vector is not None and len(parts := t.split(",")) == vector[1]:
        return ",".join(as_typed(p, FLOATING[vector[0]], vector[0]) for p in parts)
    if ctype == "bool" and size == 1 and is_integer(t) and len(t) <= 64:
        return str(int(_integer(t) != 0))  # as C++ converts an integer to a bool
    if not _floating(ctype, size):
        return t
    if t.lower() in ("true", "false"):  # a bool converts too: 1.0 or 0.0
        return "1.0" if t.lower() == "true" else "0.0"
    if re.match(r"^[+-]?[0-9]+\Z", t):
        return f"{int(t, 10)}.0" if len(t) <= 64 else t + ".0"
    return t


def _integral(ctype: str | None, size: int) -> bool:
    """Whether ``ctype`` is an integer type of ``size`` bytes (:data:`INTEGRAL`) or a pointer
    (an address: ``--arg in=1e3`` stored a double's bits as one)."""
    return INTEGRAL.get(ctype or "") == size or (ctype or "").rstrip().endswith("*")


def _floating(ctype: str | None, size: int) -> str | None:
    """``ctype`` where it is a floating type of ``size`` bytes (:data:`FLOATING`), else None."""
    return ctype if ctype in FLOATING and FLOATING[ctype] == size else None


def _vector(ctype: str | None, size: int) -> tuple[str, int] | None:
    """(component type, count) where ``ctype`` is a vector of floats (:data:`FLOAT_VECTORS`)
    whose components fit in ``size`` bytes, else None."""
    vector = FLOAT_VECTORS.get(ctype or "")
    return vector if vector is not None and FLOATING[vector[0]] * vector[1] <= size else None


def _vector_bytes(text: str, size: int, where: str, ctype: str, vector: tuple[str, int]) -> bytes:
    """A vector of floats from its components ``X,Y,...``, each as its component type takes a
    number; the bytes past them (a padded vector's) zero."""
    element, count = vector
    fields = text.split(",")
    if len(fields) != count:
        form = ",".join("XYZW"[:count])
        raise LaunchError(
            f"{where} is a {ctype}: give its {count} component(s) as {form} (each a "
            f"{element}: 1.5, -2, 1e-3), not {shorten(text.strip())!r}"
        )
    each = FLOATING[element]
    data = b"".join(
        _number_bytes(f, each, f"{where} component {'xyzw'[i]}", element)
        for i, f in enumerate(fields)
    )
    return data.ljust(size, b"\0")


def is_integer(text: str) -> bool:
    """Whether ``text`` is an integer as a launch value takes it: decimal or ``0x`` hex, a sign
    allowed, ASCII digits only (``--arg``, ``--const``, a tensor's or a field's value)."""
    return _INT.fullmatch(text) is not None


def _integer(text: str) -> int:
    """An integer :func:`is_integer` took (a leading 0 is decimal, not octal)."""
    return int(text, 0) if not re.match(r"^[+-]?0\d", text) else int(text, 10)


def integer(text: str) -> int | None:
    """``text`` as a launch's integer (:func:`is_integer`: decimal, a leading 0 too, or ``0x``
    hexadecimal, of at most 64 characters), None where it is none: the one reading of an
    integer for every launch value (``int(text, 0)`` refused ``010``)."""
    t = text.strip()
    return _integer(t) if len(t) <= 64 and is_integer(t) else None


def _number_bytes(
    text: str, size: int, where: str, ctype: str | None = None, key: str | None = None
) -> bytes:
    """One number in ``size`` bytes, little-endian; ``ctype``: the parameter's type where
    known (a floating one takes a decimal integer as a float, :data:`FLOATING`)."""
    t = as_typed(text, size, ctype)
    floating = _floating(ctype, size)
    if len(t) > 64:
        raise LaunchError(f"{where}: {shorten(t)} is too long to be a number of {size} byte(s)")
    if t.lower() in ("true", "false"):  # a bool, as C++ and Python spell it: 1 or 0
        t = "1" if t.lower() == "true" else "0"
    if is_integer(t):
        value = _integer(t)
        if not -(1 << (8 * size - 1)) <= value < (1 << (8 * size)):
            low, high = -(1 << (8 * size - 1)), (1 << (8 * size)) - 1
            bound = f"{low:#x} to {high:#x}" if "x" in t.lower() else f"{low:,} to {high:,}"
            raise LaunchError(
                f"{where}: {t} does not fit in {size} byte(s) (from {bound}, signed or unsigned)"
            )
        return (value % (1 << (8 * size))).to_bytes(size, "little")
    if _FLOAT.match(t) and _integral(ctype, size):
        give = (
            "an address, 0x7f0000000000, or a buffer: NAME=@FILE.bin, NAME+0=zeros:BYTES"
            if (ctype or "").rstrip().endswith("*")
            else "an integer: 42, -1, 0x2a; a float's bits in hexadecimal: 0x3f800000"
        )
        raise LaunchError(
            f"{where}: {shorten(t)!r} is not an integer, and its type is {ctype} (give {give})"
        )
    if _FLOAT.match(t):
        if size not in _FLOAT_FORMAT:
            raise LaunchError(
                f"{where}: a float needs a 2-, 4- or 8-byte field, not {size} byte(s)"
            )
        value_f = float(t)
        try:
            if math.isinf(value_f) and "inf" not in t.lower():  # 1e309: a finite number, too big
                raise OverflowError(t)
            if floating in BF16:
                return _bfloat16(value_f, t)
            return struct.pack(_FLOAT_FORMAT[size], value_f)
        except (OverflowError, struct.error):
            raise LaunchError(f"{where}: {t} does not fit in a {size}-byte float") from None
    if t.lower().startswith(ZEROS):  # said in the budget's error (a smaller ... zeros:BYTES)
        raise LaunchError(f"{where}: {zeros.not_at_an_offset(key, t)}")
    floats = "" if INTEGRAL.get(ctype or "") == size else "floats: 1.5, 1e-3, inf; "
    raise LaunchError(
        f"{where}: {shorten(t)!r} is not a number (integers: 42, -1, 0x2a; {floats}true, false)"
    )


def _bfloat16(value: float, text: str) -> bytes:
    """``value`` as a bfloat16 (the float's upper half, rounded to nearest even)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if math.isnan(value):
        return struct.pack("<H", (bits >> 16) | 0x40)  # a quiet NaN
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    if rounded & 0x7F80 == 0x7F80 and not math.isinf(value):
        raise OverflowError(text)
    return struct.pack("<H", rounded)


def value_bytes(
    text: str, size: int, where: str, ctype: str | None = None, *, key: str | None = None
) -> bytes:
    """The ``size`` bytes of a by-value parameter from ``--arg`` text (numbers, or a struct's
    fields); ``where`` names the argument in errors; ``ctype`` is the parameter's type where
    known (a floating one takes ``1`` as 1.0; a vector of floats, its components:
    :data:`FLOAT_VECTORS`); ``key``: the parameter's ``--arg`` key, where its fields may be
    given one by one at their offsets (``KEY+OFFSET=VALUE``), named when a field does not fit
    the size the values were split into (a struct of a pointer and two ``int``s)."""
    vector = _vector(ctype, size)
    if vector is not None and ctype is not None:
        return _vector_bytes(text, size, where, ctype, vector)
    fields = text.split(",")
    n = len(fields)
    if n == 1 and size in (1, 2, 4, 8):
        return _number_bytes(text, size, where, ctype, key)
    each = size // n if size % n == 0 else 0
    if each not in (1, 2, 4, 8):
        each = 4
    if n * each > size:
        raise LaunchError(
            f"{where}: {n} fields of {each} bytes do not fit in the parameter's {size} bytes"
        )
    try:
        data = b"".join(_number_bytes(f, each, f"{where} field {i}") for i, f in enumerate(fields))
    except LaunchError as exc:
        if key is None:
            raise
        raise LaunchError(
            f"{exc.message}; {n} values are {each}-byte fields from offset 0 of the "
            f"{size}-byte parameter (a struct of fields of other sizes takes each at its "
            f"offset: --arg {key}+OFFSET=VALUE:WIDTH, e.g. {key}+8=0x7f0000000000:8, a "
            f"pointer's buffer as {key}+OFFSET=@FILE)"
        ) from None
    return data.ljust(size, b"\0")


# --- a launch value's form, whatever the kernel ---------------------------------------------

#: the ``tensormap:...`` value of a ``CUtensorMap`` (cuda/launch/tensormap.py)
TENSORMAP = tensormap.PREFIX
#: bytes of a number given at an offset when ``:WIDTH`` is left out (an ``int``)
DEFAULT_WIDTH = 4
_OFFSET = re.compile(r"(0[xX][0-9a-fA-F]{1,8}|[0-9]{1,9})\Z")  # ASCII, below 2^32
_WIDTHS = {"1": 1, "2": 2, "4": 4, "8": 8}


def _whole(text: str) -> int:
    """A count matched by :data:`_OFFSET`: ``0x`` hexadecimal, else decimal
    (leading zeros too, as a launch's numbers: ``010`` is ten, not a Python error)."""
    return int(text[2:], 16) if text[:2].lower() == "0x" else int(text, 10)


def field_offset(text: str, where: str) -> int:
    """The OFFSET of ``--arg KEY+OFFSET``: a number of bytes below 2^32."""
    t = text.strip()
    if not _OFFSET.match(t):
        raise LaunchError(
            f"{where}: the offset after '+' must be a number of bytes (decimal or 0x...), "
            f"got {shorten(t)!r}"
        )
    return _whole(t)


def zeros_bytes(text: str, where: str) -> int:
    """The BYTES of ``zeros:BYTES``: a size within :data:`.zeros.MAX_GLOBAL_BYTES`."""
    size = zeros.size_of(text)
    if size is None:
        raise LaunchError(f"{where}: {zeros.size_error(text)}")
    return size


def field_number(value: str, where: str) -> bytes:
    """The bytes of ``NUMBER[:WIDTH]``, a number given at an offset inside a parameter."""
    number, colon, width_text = value.rpartition(":") if ":" in value else (value, "", "")
    width = _WIDTHS.get(width_text.strip(), 0) if colon else DEFAULT_WIDTH
    if not width or "," in number:
        raise LaunchError(
            f"{where}={shorten(value)}: at an offset give one of @FILE (a pointer to a buffer "
            f"of the file's bytes), {ZEROS}BYTES (a pointer to a zero-filled buffer), "
            "NUMBER[:WIDTH] (one number of 1, 2, 4 or 8 bytes; default 4) or tensormap:..."
        )
    return value_bytes(number.strip(), width, where)


def check_number(text: str, where: str) -> None:
    """``text`` is a number some parameter takes: a double takes every number the others do
    (a decimal integer as a float, a hexadecimal one as its 64 bits), so what a double
    refuses no parameter takes (``1e400``, ``abc``, 65 digits)."""
    try:
        _number_bytes(text, 8, where, "double")
    except LaunchError:
        if _FLOAT.match(text.strip()) and not is_integer(text.strip()):  # 1e400: too large
            raise LaunchError(
                f"{where}: {shorten(text.strip())} is beyond the range of every float "
                "(a double holds at most about 1.8e308): give a finite number, or inf"
            ) from None
        raise


def check_arg_form(key: str, value: str, where: str) -> None:
    """What a spec's ``kernel.args`` value must be whatever the kernel: ``@FILE`` is read by
    the trace (its file is checked by :mod:`.files`); ``tensormap:...`` is a map the driver
    takes (:func:`.tensormap.parse_spec`: its fields, the driver's limits); ``zeros:BYTES``
    is given at an offset (``KEY+0``) with a positive size; ``NUMBER[:WIDTH]`` at an offset
    fits its width; any other value is numbers (``a,b,c`` for a struct), each one
    :func:`check_number` takes.
    Which parameter the key names, and whether the value fits its type, only the compiled
    kernel says (the trace)."""
    v = value.strip()
    if not key.partition("+")[0].strip():  # the trace's "expects POSITION=VALUE", a warning
        raise LaunchError(
            f"{where}: the key {shorten(key)!r} names no parameter: give its position (0, 1, "
            "...) or its name, and +OFFSET for a byte inside it"
        )
    if not v:
        raise LaunchError(f"{where}: the value is empty: give a number, @FILE or zeros:BYTES")
    if v.startswith("@"):
        return
    if v.startswith(TENSORMAP):
        try:
            tensormap.parse_spec(v)
        except tensormap.TensorMapError as exc:
            raise LaunchError(f"{where}: {exc.message}") from None
        return
    _name, plus, offset = key.partition("+")
    if plus:
        field_offset(offset, where)
        if v.lower().startswith(ZEROS):
            zeros_bytes(v[len(ZEROS) :], where)
        else:
            field_number(v, where)
        return
    if v.lower().startswith(ZEROS):  # the form first, and the size where it is wrong too
        raise LaunchError(f"{where}: {zeros.not_at_an_offset(key, v)}")
    for i, field in enumerate(v.split(",")):
        check_number(field, where if "," not in v else f"{where} field {i}")


def check_typed_form(value: str, where: str) -> None:
    """What a ``kernel.const`` or ``kernel.memory`` value ``[TYPE:]v,v,...`` must be whatever
    the kernel: each value a number some type takes (:func:`check_number`); ``@FILE`` is read
    by the trace; TYPE is one :func:`element_type` knows."""
    v = value.strip()
    if not v:
        raise LaunchError(f"{where}: the value is empty: give numbers or @FILE")
    if v.startswith("@"):
        return
    type_name, colon, numbers = v.partition(":")
    if colon:
        element_type(type_name, where)
    for i, field in enumerate(table_fields(numbers if colon else v, where)):
        check_number(field, f"{where} value {i}")


def table_fields(numbers: str, where: str) -> list[str]:
    """The values of ``v,v,...`` (a ``--const`` or ``--memory`` table, a spec's too), at most
    :data:`MAX_CONST_VALUES` of them: the one bound of both, before the trace and in it."""
    fields = [f.strip() for f in numbers.split(",", MAX_CONST_VALUES)]
    if len(fields) > MAX_CONST_VALUES:
        raise LaunchError(
            f"{where}: more than {MAX_CONST_VALUES:,} values; give a larger table as @FILE "
            "(its raw bytes, or a .npy)"
        )
    return fields


def element_type(type_name: str, where: str) -> tuple[str, int]:
    """(C type, bytes) of the ``TYPE`` of a ``TYPE:v,v,...`` value (:func:`scalar_of`), or the
    error naming the types there are (``flaot``)."""
    scalar = scalar_of(type_name.strip())
    if scalar is None:
        raise LaunchError(
            f"{where}: unknown element type {shorten(type_name.strip())!r} (float, double, "
            "half, int, unsigned, int8_t..uint64_t, char, short, long long)"
        )
    return scalar
