"""The preprocessing directives of a C, C++ or CUDA text, as the preprocessor would see them.

:func:`directives` is one pass over the text (comments, string and raw string literals,
line splices), done twice when the text holds ``??`` (with and without trigraphs), so no
directive is hidden from the check that reads them (:mod:`.sources`). A raw string literal
that a backslash at the end of a line would make ambiguous is refused (:class:`Refused`).

:func:`computed_targets` says which header names a computed ``#include`` (``#include H``,
``#include STR(pipe)``) may give, by expanding it with the macros the scanned files
``#define`` (:func:`definition`): object-like and function-like, ``#`` and ``##``. A name
defined more than once is tried with each definition (the branches of an ``#if`` are not
told apart); an expansion past :data:`MAX_EXPANSION` tokens gives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..plumbing.frozen import frozen

#: the most tokens one computed include's expansion may make, and the definitions of one
#: name tried
MAX_EXPANSION, MAX_VARIANTS = 4096, 8
_TOKEN = re.compile(
    r"""\s+|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*|\.?[0-9][\w.]*|##|%:%:|."""
)
_HEADER_NAME = re.compile(r'"([^"\n]*)"|<([^>\n]*)>')
_SPLICE = re.compile(r"\\[ \t]*\r?\n")
_DEFINE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)(\(([^()]*)\))?(.*)\Z", re.S)

_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_RAW_PREFIXES = ("R", "u8R", "uR", "UR", "LR")


@frozen
class Directive:
    """One preprocessing directive, where its ``#`` is."""

    line: int
    column: int
    text: str  # from '#' to the end of the logical line, comments replaced by spaces


class Refused(Exception):
    """Text whose directives cannot be told before compiling, at a line and column (the
    caller makes it a located error of its file)."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


def _trigraphs(text: str) -> str:
    return text.replace("??=", "#").replace("??/", "\\")


def directives(text: str) -> Iterator[Directive]:
    """Every preprocessing directive of ``text`` (line splices and comments handled)."""
    yield from _scan(text)
    if "??" in text:  # trigraphs are on in some -std modes: look at the text both ways
        yield from _scan(_trigraphs(text))


_INTERESTING = re.compile(r"[\\\n/\"'#%]")
_NONBLANK = re.compile(r"[^ \t\r\f\v]")


def _word_before(s: str, i: int) -> str:
    """The identifier characters just before ``i`` (line splices skipped), at most 3."""
    out = ""
    j = i - 1
    while j >= 0 and len(out) < 4:
        if s[j] == "\n":
            k = j - 1
            while k >= 0 and s[k] in " \t\r":
                k -= 1
            if k >= 0 and s[k] == "\\":
                j = k - 1
                continue
            break
        if s[j] not in _IDENT_CHARS:
            break
        out = s[j] + out
        j -= 1
    return out


def _scan(s: str) -> Iterator[Directive]:  # noqa: C901 - one state machine, read top to bottom
    n = len(s)
    i = 0
    line = 1
    at_start = True  # only blanks and comments since the last newline
    directive: list[str] | None = None
    d_line = d_col = 0
    line_start = 0

    def splice(k: int) -> int:
        """The index after a backslash-newline starting at ``k`` (blanks allowed), or -1."""
        j = k + 1
        while j < n and s[j] in " \t":
            j += 1
        if j < n and s[j] == "\r":
            j += 1
        return j + 1 if j < n and s[j] == "\n" else -1

    while i < n:
        m = _INTERESTING.search(s, i)
        stop = m.start() if m else n
        if stop > i:
            if at_start and _NONBLANK.search(s, i, stop):
                at_start = False
            if directive is not None:
                directive.append(s[i:stop])
            i = stop
            if i >= n:
                break
        c = s[i]
        if c == "\\":
            j = splice(i)
            if j >= 0:
                line += 1
                line_start = j
                i = j
                continue
        elif c == "\n":
            if directive is not None:
                yield Directive(d_line, d_col, "".join(directive))
                directive = None
            line += 1
            line_start = i + 1
            at_start = True
            i += 1
            continue
        elif c == "/" and s.startswith("/*", i):
            end = s.find("*/", i + 2)
            end = n if end < 0 else end + 2
            newlines = s.count("\n", i, end)
            if newlines:
                line += newlines
                line_start = s.rfind("\n", i, end) + 1
                at_start = True
            if directive is not None:
                directive.append(" ")
            i = end
            continue
        elif c == "/" and s.startswith("//", i):
            end = i + 2
            while True:  # a // comment goes on over backslash-newlines
                nl = s.find("\n", end)
                if nl < 0:
                    end = n
                    break
                k = nl - 1
                while k > i and s[k] in " \t\r":
                    k -= 1
                if s[k] == "\\":
                    line += 1
                    end = nl + 1
                    line_start = end
                    continue
                end = nl
                break
            i = end
            continue
        elif c in "\"'":
            start = i
            if c == '"' and _word_before(s, i) in _RAW_PREFIXES:
                i, line, line_start = _raw_string(s, i, line, line_start)
            else:
                i = _quoted(s, i, c, splice)
            if directive is not None:
                directive.append(s[start:i])
            at_start = False
            continue
        elif at_start and directive is None and (c == "#" or s.startswith("%:", i)):
            directive = []
            d_line, d_col = line, i - line_start + 1
        at_start = False
        if directive is not None:
            directive.append(c)
        i += 1
    if directive is not None:
        yield Directive(d_line, d_col, "".join(directive))


def _quoted(s: str, i: int, quote: str, splice: object) -> int:
    """The index after a string or character literal (it ends at a newline if unclosed)."""
    n = len(s)
    j = i + 1
    while j < n:
        c = s[j]
        if c == quote:
            return j + 1
        if c == "\n":
            return j
        if c == "\\":
            k = splice(j)  # type: ignore[operator]
            j = k if k >= 0 else j + 2
            continue
        j += 1
    return n


def _raw_string(s: str, i: int, line: int, line_start: int) -> tuple[int, int, int]:
    """The index after the raw string literal whose quote is at ``i`` (and the line)."""
    open_at = s.find("(", i + 1, i + 18)
    delim = s[i + 1 : open_at] if open_at >= 0 else None
    if delim is None or any(ch in delim for ch in ' ()\\\t\n"'):
        raise Refused(line, i - line_start + 1, "a raw string literal with a malformed delimiter")
    close = s.find(")" + delim + '"', open_at)
    end = len(s) if close < 0 else close + len(delim) + 2
    body = s[open_at:end]
    if re.search(r"\\[ \t]*\r?\n", body):
        raise Refused(
            line,
            i - line_start + 1,
            "a raw string literal holds a backslash at the end of a line; shmem cannot check "
            "this file's directives before compiling (split the string)",
        )
    newlines = body.count("\n")
    if newlines:
        line += newlines
        line_start = s.rfind("\n", i, end) + 1
    return end, line, line_start


@frozen
class Macro:
    """A ``#define``: its parameters (None: object-like) and its body's tokens."""

    params: tuple[str, ...] | None
    body: tuple[str, ...]


def _tokens(text: str) -> list[str]:
    """``text``'s preprocessing tokens, a run of blanks as one ``" "``."""
    return [" " if t.isspace() else t for t in _TOKEN.findall(text)]


def definition(rest: str) -> tuple[str, Macro] | None:
    """The macro a ``#define`` whose text after ``define`` is ``rest`` makes, or None."""
    m = _DEFINE.match(_unsplice(rest))
    if m is None:
        return None
    params = None
    if m.group(2) is not None:
        params = tuple(p.strip() for p in m.group(3).split(",")) if m.group(3).strip() else ()
        params = tuple("__VA_ARGS__" if p == "..." else p for p in params)
    return m.group(1), Macro(params, tuple(_tokens(m.group(4).strip())))


def computed_targets(rest: str, macros: dict[str, list[Macro]]) -> list[tuple[str, bool]]:
    """The header names (name, quoted) that ``#include REST`` may give with ``macros``."""
    out: dict[tuple[str, bool], None] = {}
    variants = min(MAX_VARIANTS, max((len(v) for v in macros.values()), default=1))
    for k in range(variants):
        table = {name: defs[min(k, len(defs) - 1)] for name, defs in macros.items()}
        try:
            text = "".join(_expand(_tokens(_unsplice(rest)), table, [0])).strip()
        except _TooLong:
            continue
        # the first header name is the one opened (the preprocessor warns of the rest)
        name = _HEADER_NAME.match(text)
        if name is not None:
            quoted = name.group(1) is not None
            out[(name.group(1) if quoted else name.group(2), quoted)] = None
    return list(out)


def _unsplice(text: str) -> str:
    """``text`` without its line splices (a directive's strings keep theirs)."""
    return _SPLICE.sub("", text)


class _TooLong(Exception):
    pass


def _expand(tokens: list[str], table: dict[str, Macro], made: list[int]) -> list[str]:
    """``tokens`` with every macro of ``table`` expanded and rescanned (a macro's own name
    in its expansion is left alone); ``made[0]`` counts the tokens made (:class:`_TooLong`)."""
    items = [(t, frozenset[str]()) for t in tokens]
    out: list[str] = []
    i = 0
    while i < len(items):
        text, hide = items[i]
        macro = table.get(text) if text not in hide else None
        if macro is None:
            out.append(text)
            i += 1
            continue
        end, body = i + 1, list(macro.body)
        if macro.params is not None:
            got = _arguments(items, i + 1)
            if got is None:
                out.append(text)
                i += 1
                continue
            args, end = got
            body = _substitute(macro, args, table, made)
        made[0] += len(body)
        if made[0] > MAX_EXPANSION:
            raise _TooLong
        items[i:end] = [(t, hide | {text}) for t in body]
    return out


def _arguments(
    items: list[tuple[str, frozenset[str]]], j: int
) -> tuple[list[list[str]], int] | None:
    """A function-like macro's arguments from ``items[j:]`` (blanks, then ``(``), and the
    index after their ``)``; None where there are none."""
    while j < len(items) and items[j][0] == " ":
        j += 1
    if j >= len(items) or items[j][0] != "(":
        return None
    args: list[list[str]] = [[]]
    depth = 0
    for k in range(j + 1, len(items)):
        t = items[k][0]
        if t == ")" and depth == 0:
            return [[t for t in a] for a in args], k + 1
        depth += (t == "(") - (t == ")")
        if t == "," and depth == 0:
            args.append([])
        else:
            args[-1].append(t)
    return None


def _substitute(
    macro: Macro, args: list[list[str]], table: dict[str, Macro], made: list[int]
) -> list[str]:
    """A function-like macro's body with its arguments put in (``#``, ``##``)."""
    params = macro.params or ()
    if params and params[-1] == "__VA_ARGS__" and len(args) > len(params):
        rest = [t for a in args[len(params) - 1 :] for t in [*a, ","]][:-1]
        args = [*args[: len(params) - 1], rest]
    given = {p: args[n] if n < len(args) else [] for n, p in enumerate(params)}
    body = [t for t in macro.body]
    out: list[str] = []
    k = 0
    while k < len(body):
        t = body[k]
        nxt = next((b for b in body[k + 1 :] if b != " "), "")
        prev = next((b for b in reversed(out) if b != " "), "")
        if t in ("#", "%:") and nxt in given:
            k = body.index(nxt, k + 1)
            out.append(_stringify(given[nxt]))
        elif t in given:
            pasted = "##" in (nxt, prev) or "%:%:" in (nxt, prev)
            out += given[t] if pasted else _expand(given[t], table, made)
        else:
            out.append(t)
        k += 1
    return _paste(out)


def _stringify(tokens: list[str]) -> str:
    text = "".join(tokens).strip()
    return '"' + re.sub(r'(["\\])', r"\\\1", text) + '"'


def _paste(tokens: list[str]) -> list[str]:
    """``tokens`` with each ``a ## b`` made one token (blanks around ``##`` dropped)."""
    out: list[str] = []
    k = 0
    while k < len(tokens):
        t = tokens[k]
        if t in ("##", "%:%:"):
            while out and out[-1] == " ":
                out.pop()
            k += 1
            while k < len(tokens) and tokens[k] == " ":
                k += 1
            right = tokens[k] if k < len(tokens) else ""
            out[-1:] = _tokens((out[-1] if out else "") + right)
        else:
            out.append(t)
        k += 1
    return out
