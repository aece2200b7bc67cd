"""Text that is not a YAML document, said in words at its place: a file that is not UTF-8
text (UTF-16 or UTF-32, a NUL byte, bad bytes), and PyYAML's syntax errors turned into what
to do for the slips a spec writer makes (tabs, indentation, unquoted C expressions, ':' in a
value, unclosed lists). :mod:`shmem_cli.spec.source` calls these while it loads a spec.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from shmem_cli.plumbing.bounded_read import encoding_error, wide_encoding
from shmem_cli.plumbing.errors import ShmemError, SourcePos, shorten


def mark_pos(mark: Any) -> SourcePos | None:
    """The 1-based place of a PyYAML mark (None for none)."""
    if mark is None:
        return None
    return SourcePos(int(mark.line) + 1, int(mark.column) + 1)


def offset_pos(text: str, index: int) -> SourcePos:
    """1-based line and column of character ``index`` in ``text``."""
    line_start = text.rfind("\n", 0, index) + 1
    return SourcePos(text.count("\n", 0, index) + 1, index - line_start + 1)


def decode_text(source: bytes, path: str) -> str:
    """A spec file's bytes as text (UTF-8, a byte-order mark dropped), or a located error."""
    if encoding := wide_encoding(source):
        raise encoding_error(path, encoding)
    if source.startswith(b"\xef\xbb\xbf"):
        source = source[3:]
    nul = source.find(b"\x00")
    if nul >= 0:
        raise ShmemError(
            "file contains a NUL byte; it looks like a binary file, not a YAML spec",
            path=path,
            pos=byte_pos(source, nul),
        )
    try:
        return source.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ShmemError(
            f"file is not valid UTF-8 text (byte 0x{source[exc.start]:02x})",
            path=path,
            pos=byte_pos(source, exc.start),
        ) from None


def byte_pos(source: bytes, index: int) -> SourcePos:
    """1-based line and column (in characters, as far as they decode) of byte ``index``."""
    line_start = source.rfind(b"\n", 0, index) + 1
    column = len(source[line_start:index].decode("utf-8", errors="replace")) + 1
    return SourcePos(source.count(b"\n", 0, index) + 1, column)


def syntax_error(exc: yaml.YAMLError, text: str, path: str) -> ShmemError:
    """PyYAML's error as a located ShmemError, in words where the slip is a known one."""
    if isinstance(exc, yaml.reader.ReaderError):
        char = exc.character
        code = char if isinstance(char, int) else ord(char) if char else 0
        return ShmemError(
            f"invalid YAML: control character U+{code:04X} is not allowed",
            path=path,
            pos=offset_pos(text, exc.position),
        )
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        advice = _in_words(exc, text)
        if advice is not None:
            return ShmemError(f"invalid YAML: {advice}", path=path, pos=mark_pos(mark))
        problem = exc.problem or exc.context or "syntax error"
        message = f"invalid YAML: {shorten(problem, 100)}"
        if exc.context and exc.problem:
            message += f" ({shorten(exc.context, 100)}"
            if exc.context_mark is not None and exc.context_mark is not exc.problem_mark:
                message += f" at line {exc.context_mark.line + 1}"
            message += ")"
        return ShmemError(message, path=path, pos=mark_pos(exc.problem_mark or exc.context_mark))
    return ShmemError(f"invalid YAML: {shorten(str(exc), 100)}", path=path)


# a value, after ``key:`` (or ``- key:``), that holds characters YAML gives a meaning of its own
# (patterns compiled by re on first use: only a spec with a YAML error needs them)
_KEY_VALUE = r"^\s*(?:-\s+)?([A-Za-z_][\w.]*)\s*:\s+(.+?)\s*(?:#.*)?$"
_C_SYNTAX = r"[?!&*|<>%@`]|:\s"
#: the longest line given back quoted in a hint (a longer one is said without its text)
MAX_EXAMPLE = 120


def _in_words(exc: yaml.MarkedYAMLError, text: str) -> str | None:
    """PyYAML's complaint said as what to do, for the slips a spec writer makes; None to
    keep PyYAML's own words."""
    problem = exc.problem or ""
    mark = exc.problem_mark or exc.context_mark
    lines = text.splitlines()
    line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    if "'\\t'" in problem or "\t" in line[: len(line) - len(line.lstrip())]:
        return "a tab character in the indentation: YAML indents with spaces only"
    if problem.startswith("expected <block end>"):
        where = exc.context_mark
        above = f" (the block starts at line {where.line + 1})" if where is not None else ""
        return (
            "this line is indented differently from the other keys of its block"
            f"{above}: YAML nests by indentation, so line it up with them (in spaces)"
        )
    if "mapping values are not allowed" in problem and mark is not None and mark.line > 0:
        above = next((x for x in reversed(lines[: mark.line]) if x.strip()), "")
        has_value = re.match(_KEY_VALUE, above) is not None
        if has_value and len(line) - len(line.lstrip()) > len(above) - len(above.lstrip()):
            return (
                "this line is indented deeper than the line above it, which is not a block "
                "(its value is already given): YAML nests by indentation, so line it up"
            )
    found = re.match(_KEY_VALUE, line)
    if (
        found
        and "alias" not in problem
        and found.group(2)[0] not in "'\""
        and re.search(_C_SYNTAX, found.group(2).strip("[]"))
    ):
        key, value = found.group(1), found.group(2)
        inner = value[1:-1].strip() if value.startswith("[") and value.endswith("]") else None
        quoted = (
            f'{key}: ["{inner}"]' if inner is not None and "," not in inner else f'{key}: "{value}"'
        )
        if len(quoted) > MAX_EXAMPLE:  # the line itself is never echoed whole
            quoted = f'{shorten(key)}: "..." (the value in double quotes)'
        if key == "name":
            return f"a name with ':', '#' or other YAML characters must be quoted: {quoted}"
        return (
            "YAML reads characters of this C expression ('?', '!', '&', '*', ':', ...) as its "
            f"own syntax: quote the expression, e.g. {quoted}"
        )
    if "mapping values are not allowed" in problem:
        return "a ': ' inside a value ends it: quote the value, e.g. name: \"tile: row read\""
    opened = exc.context_mark.line + 1 if exc.context_mark is not None else None
    for close, kind in (("]", "[...] list"), ("}", "{...} mapping")):
        if problem.startswith(f"expected ',' or '{close}'"):
            return (
                f"the {kind} opened at line {opened} is not closed before this point: close it "
                f"with '{close}', or quote an item that holds ':', '#', '?' or '!'"
            )
    if "could not find expected ':'" in problem:
        return (
            f"line {opened} is not 'key: value' (is its ':' missing?), nor a list item "
            "('- ...'): add the ':', or quote the text"
        )
    return None
