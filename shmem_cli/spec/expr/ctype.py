"""C's integer types as CUDA device code sees them (LP64: ``long`` is 64 bits).

Four types carry every value: ``int``, ``unsigned``, ``long long`` and ``unsigned long
long``. ``long`` and ``unsigned long`` have the same width and the same conversions as
their ``long long`` twins, so they are folded into them. This module holds the static
rules: the type of a literal, of a cast, and the usual arithmetic conversions.
"""

from __future__ import annotations

import enum


class CType(enum.Enum):
    """One C integer type: its spelling, width in bits and signedness."""

    INT = ("int", 32, True)
    UINT = ("unsigned", 32, False)
    LLONG = ("long long", 64, True)
    ULLONG = ("unsigned long long", 64, False)

    def __init__(self, spelling: str, bits: int, signed: bool) -> None:
        self.spelling = spelling
        self.bits = bits
        self.signed = signed
        # the smallest and largest value (plain attributes: the evaluator reads them often)
        self.min = -(1 << (bits - 1)) if signed else 0
        self.max = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    @property
    def suffix(self) -> str:
        """The literal suffix that gives a decimal literal this type."""
        return {"int": "", "unsigned": "u", "long long": "ll", "unsigned long long": "ull"}[
            self.spelling
        ]

    def fits(self, value: int) -> bool:
        return self.min <= value <= self.max

    def wrap(self, value: int) -> int:
        """``value`` converted to this type (modulo 2^bits, as C++20 defines every conversion)."""
        value &= (1 << self.bits) - 1
        if self.signed and value > self.max:
            value -= 1 << self.bits
        return value


_BY_SIGN_AND_WIDTH = {(t.signed, t.bits): t for t in CType}


def common(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions: the type both operands are converted to.

    Every type here is at least as wide as ``int``, so integer promotion changes nothing.
    """
    if a is b:
        return a
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.signed else (b, a)
    if unsigned.bits >= signed.bits:
        return unsigned
    return signed  # a wider signed type holds every value of the narrower unsigned one


_SUFFIXES = {
    "": (False, 0),
    "u": (True, 0),
    "l": (False, 1),
    "ul": (True, 1),
    "lu": (True, 1),
    "ll": (False, 2),
    "ull": (True, 2),
    "llu": (True, 2),
}


def literal(token: str) -> tuple[int, CType]:
    """Value and type of an integer literal, by C's rules; ValueError says what is wrong.

    A decimal literal is the first of int, long, long long that holds it; an octal, hex
    or binary literal may also be unsigned; ``u`` makes it unsigned, ``l``/``ll`` at least
    64 bits (``long`` is 64 bits under CUDA's LP64 model).
    """
    body = token.rstrip("uUlL")
    suffix = token[len(body) :]
    if suffix.lower() not in _SUFFIXES or "lL" in suffix or "Ll" in suffix:
        raise ValueError(
            f"invalid suffix {suffix!r} on integer literal {token!r}; "
            "valid suffixes are u, l, ll, ul, ull (either case, ll not mixed)"
        )
    unsigned, longs = _SUFFIXES[suffix.lower()]
    decimal = True
    if body[:2] in ("0x", "0X"):
        value, decimal = int(body[2:], 16), False
    elif body[:2] in ("0b", "0B"):
        value, decimal = int(body[2:], 2), False
    elif len(body) > 1 and body[0] == "0":
        if any(c in "89" for c in body):
            raise ValueError(f"invalid octal literal {token!r} (digits 8 and 9 are not octal)")
        value, decimal = int(body, 8), False
    else:
        value = int(body)
    candidates: list[CType] = []
    if longs == 0:
        candidates += [CType.UINT] if unsigned else [CType.INT] + ([] if decimal else [CType.UINT])
    if unsigned:
        candidates.append(CType.ULLONG)
    else:
        candidates += [CType.LLONG] + ([] if decimal else [CType.ULLONG])
    for ctype in candidates:
        if ctype.fits(value):
            return value, ctype
    raise ValueError(
        f"integer literal {token!r} does not fit in {candidates[-1].spelling} "
        f"(the largest is {candidates[-1].max})"
    )


CAST_WORDS = frozenset(
    [
        "signed",
        "unsigned",
        "int",
        "long",
        "short",
        "char",
        "size_t",
        "ptrdiff_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
    ]
)
_TYPEDEFS = {
    "size_t": CType.ULLONG,
    "ptrdiff_t": CType.LLONG,
    "int32_t": CType.INT,
    "uint32_t": CType.UINT,
    "int64_t": CType.LLONG,
    "uint64_t": CType.ULLONG,
}
CAST_HELP = (
    "casts to int, unsigned, long, long long (each signed or unsigned), size_t, "
    "ptrdiff_t, int32_t, uint32_t, int64_t and uint64_t are supported"
)


def cast_type(words: list[str]) -> CType:
    """The type named by the words of a cast such as ``(unsigned long long)``."""
    spelled = " ".join(words)
    if len(words) == 1 and words[0] in _TYPEDEFS:
        return _TYPEDEFS[words[0]]
    counts = {w: words.count(w) for w in set(words)}
    if "short" in counts or "char" in counts:
        raise ValueError(f"a cast to {spelled!r} is not modelled; {CAST_HELP}")
    valid = (
        set(counts) <= {"signed", "unsigned", "int", "long"}
        and counts.get("int", 0) <= 1
        and counts.get("long", 0) <= 2
        and counts.get("signed", 0) + counts.get("unsigned", 0) <= 1
    )
    if not valid:
        raise ValueError(f"{spelled!r} is not a type shmem knows; {CAST_HELP}")
    return _BY_SIGN_AND_WIDTH[("unsigned" not in counts, 64 if "long" in counts else 32)]


def by_name(name: str) -> CType:
    """The type named in a spec (``int``, ``unsigned``, ``long long``, ...)."""
    try:
        return cast_type(name.split())
    except ValueError:
        raise ValueError(
            f"unknown type {name[:40]!r}: a param or loop variable is int, unsigned, "
            "long long or unsigned long long"
        ) from None
