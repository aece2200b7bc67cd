"""Schema problems in words: jsonschema's errors turned into located messages with the fix.

jsonschema says *that* a value is wrong and where in the data; :class:`Reporter`
says it as a person would (``unknown key 'shpae' in arrays.a (did you mean
'shape'?)``), at the line and column of the value or key, one message per
problem, sorted by position.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...hardware.arch import unmeasured_arch
from ...plumbing.errors import ShmemError, SourcePos, shorten
from ..source import Document, KeyPath
from .fast import regex

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_IDENT_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$"
#: a name shown in reports: one line, so that no name can start a line of its own there
#: (a line "::error file=..." in a CI log is a command to the runner)
_ONE_LINE_PATTERN = "^[^\\n\\r]*$"
#: a kernel argument's key: no control character (a NUL, an escape), which no C name holds
_NO_CONTROL_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
_IDENT_RE = regex(_IDENT_PATTERN)  # '$' as the schema means it: the end of the text

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true/false)",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for key in path:
        if isinstance(key, int) and not isinstance(key, bool):
            out += f"[{key}]"
        elif isinstance(key, str) and _IDENT_RE.match(key):
            out += f".{key}" if out else key
        else:
            out += f"[{_show(key)}]"
    return out or "top level"


def _show(value: Any) -> str:
    """A short rendering of a value in YAML terms."""
    if isinstance(value, str):
        return f"'{shorten(value)}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return shorten(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return shorten(value)  # pragma: no cover


def _found(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {_show(value)}"
    if isinstance(value, bool):
        return f"the boolean {_show(value)}"
    if value is None:
        return "null"
    if isinstance(value, int):
        return f"the integer {_show(value)}"
    if isinstance(value, float):
        return f"the number {_show(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "a mapping"
    return shorten(value)  # pragma: no cover


def _or_list(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _closest(word: Any, choices: Iterable[Any]) -> str | None:
    if not isinstance(word, str):
        return None
    names = [c for c in choices if isinstance(c, str)]
    for name in names:
        if name.lower() == word.lower():
            return name
    import difflib  # only for messages (keeps start-up short)

    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _suggest(word: Any, choices: Iterable[Any]) -> str:
    close = _closest(word, choices)
    return f" (did you mean '{close}'?)" if close is not None else ""


def _type_names(value: Any) -> list[str]:
    types = [value] if isinstance(value, str) else list(value)
    return [_TYPE_NAMES.get(t, t) for t in types]


def _pattern_hint(pattern: str, value: Any) -> str:
    if pattern == _IDENT_PATTERN:
        return (
            f"{_show(value)} is not a valid name "
            "(use letters, digits and '_', not starting with a digit)"
        )
    if pattern == _ONE_LINE_PATTERN:
        return f"{_show(value)} holds a line break: a name is one line of the report"
    if pattern == _NO_CONTROL_PATTERN:
        return (
            f"{_show(value)} holds a control character: write the parameter's name as the "
            "kernel declares it (NAME or NAME+OFFSET), or its 0-based position"
        )
    if "\\.\\." in pattern:
        return (
            f"{_show(value)} is not a valid range "
            "(write 'start..stop' or 'start..stop:step', e.g. '0..3' or '0..30:2')"
        )
    return f"{_show(value)} does not match the pattern {shorten(pattern)}"


class Reporter:
    """Collects the schema problems of one document as located, worded ShmemErrors."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.found: list[tuple[tuple[int, int], str, ShmemError]] = []
        # A missing required key that an unknown key's suggestion names is a
        # typo already reported ("unknown key 'shpae' ... did you mean 'shape'?").
        self.suggested: set[tuple[KeyPath, str]] = set()
        self.missing: list[tuple[KeyPath, str, str, SourcePos | None]] = []

    def add(self, message: str, pos: SourcePos | None) -> None:
        err = ShmemError(message, path=self.doc.path, pos=pos)
        key = (pos.line, pos.column) if pos is not None else (0, 0)
        self.found.append((key, message, err))

    def results(self) -> list[ShmemError]:
        for where, name, message, pos in self.missing:
            if (where, name) not in self.suggested:
                self.add(message, pos)
        self.missing.clear()
        seen: set[tuple[tuple[int, int], str]] = set()
        out: list[ShmemError] = []
        for key, message, err in sorted(self.found, key=lambda item: (item[0], item[1])):
            if (key, message) in seen:
                continue
            seen.add((key, message))
            out.append(err)
        return out

    def report_all(self, errors: Iterable[ValidationError]) -> None:
        errors = list(errors)
        # A value of the wrong type also fails every other keyword (enum,
        # pattern...); only the type error is worth showing for it.
        typed = {
            tuple(e.absolute_path)
            for e in errors
            if e.validator == "type" and "propertyNames" not in e.absolute_schema_path
        }
        for error in errors:
            if (
                tuple(error.absolute_path) in typed
                and error.validator != "type"
                and "propertyNames" not in error.absolute_schema_path
            ):
                continue
            self.report(error)

    def report(self, error: ValidationError) -> None:
        path = list(error.absolute_path)
        where = _dotted(path)
        kind = error.validator
        value: Any = error.instance
        arg: Any = error.validator_value
        sub_schema: Any = error.schema
        doc = self.doc

        if "propertyNames" in error.absolute_schema_path:
            # ``value`` is the offending key of the mapping at ``path``.
            pos = doc.key_pos(*path, value)
            if kind == "pattern":
                self.add(f"{where}: {_pattern_hint(str(arg), value)}", pos)
            elif kind == "type":
                self.add(f"{where}: the name {_show(value)} must be a string", pos)
            else:
                self.add(f"{where}: invalid name {_show(value)}: {error.message}", pos)
            return

        if kind == "additionalProperties" and isinstance(value, dict):
            allowed = list(sub_schema.get("properties", {}))
            place = "at top level" if not path else f"in {where}"
            for extra in value:
                if extra in allowed:
                    continue
                close = _closest(extra, allowed)
                if close is not None:
                    hint = f" (did you mean '{close}'?)"
                    self.suggested.add((tuple(path), close))
                else:
                    hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
                self.add(f"unknown key {_show(extra)} {place}{hint}", doc.key_pos(*path, extra))
            return

        pos = doc.pos(*path)
        if kind in ("anyOf", "oneOf"):
            self.report_alternatives(error)
        elif kind == "type":
            expected = _or_list(_type_names(arg))
            self.add(f"{where}: expected {expected}, found {_found(value)}", pos)
        elif kind == "enum" and list(path) == ["arch"]:
            self.add(f"{where}: {unmeasured_arch(shorten(value))}", pos)
        elif kind == "enum":
            choices = ", ".join(shorten(c) if isinstance(c, str) else _show(c) for c in arg)
            self.add(f"{where}: {_show(value)} is not one of {choices}{_suggest(value, arg)}", pos)
        elif kind == "required" and isinstance(value, dict):
            for name in arg:
                if name not in value:
                    if path:
                        message = f"{where}: missing required key {_show(name)}"
                    else:
                        message = f"missing required top-level key {_show(name)}"
                    self.missing.append((tuple(path), name, message, pos))
        elif kind == "minItems":
            if arg == 1:
                self.add(f"{where}: must not be an empty list", pos)
            else:
                self.add(f"{where}: needs at least {arg} items, found {len(value)}", pos)
        elif kind == "maxItems":
            self.add(f"{where}: allows at most {arg} items, found {len(value)}", pos)
        elif kind == "minProperties":
            self.add(f"{where}: needs at least {arg} entr{'y' if arg == 1 else 'ies'}", pos)
        elif kind == "minimum":
            self.add(f"{where}: must be at least {arg}, found {_show(value)}", pos)
        elif kind == "maximum":
            self.add(f"{where}: must be at most {arg}, found {_show(value)}", pos)
        elif kind == "minLength" and arg == 1:
            self.add(f"{where}: must not be empty", pos)
        elif kind == "pattern":
            self.add(f"{where}: {_pattern_hint(str(arg), value)}", pos)
        else:
            self.add(f"{where}: {shorten(error.message, 120)}", pos)

    def report_alternatives(self, error: ValidationError) -> None:
        """Explain an anyOf/oneOf failure by the alternative the user meant."""
        from jsonschema.exceptions import best_match

        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context or ():
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        expected: list[str] = []
        plausible: list[list[ValidationError]] = []
        for subs in branches.values():
            mismatch = [s for s in subs if s.validator == "type" and not s.relative_path]
            if mismatch:
                for name in _type_names(mismatch[0].validator_value):
                    if name not in expected:
                        expected.append(name)
            else:
                plausible.append(subs)
        if len(plausible) == 1:
            self.report_all(plausible[0])
        elif plausible:
            best = best_match(sub for subs in plausible for sub in subs)
            if best is not None:
                self.report(best)
        elif expected:
            where = _dotted(list(error.absolute_path))
            self.add(
                f"{where}: expected {_or_list(expected)}, found {_found(error.instance)}",
                self.doc.pos(*error.absolute_path),
            )
        else:  # pragma: no cover - every alternative has a type
            self.add(
                f"{_dotted(list(error.absolute_path))}: {shorten(error.message, 120)}",
                self.doc.pos(*error.absolute_path),
            )
