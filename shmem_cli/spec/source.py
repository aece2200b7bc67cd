"""Safe YAML loading with source positions (schema validation: :mod:`shmem_cli.spec.schema`).

A spec file is parsed with PyYAML's *safe* composer only (``yaml.SafeLoader``);
nodes are converted to plain Python values here, never by a YAML constructor
that could build arbitrary objects. Every value and every mapping key keeps its
1-based line and column, so later stages can point at the exact place of a
problem (:meth:`Document.pos`, :meth:`Document.key_pos`).

Limits guard against hostile input: file size, node count after alias
expansion ("billion laughs"), and nesting depth. YAML merge keys (``<<``) are
supported with the same semantics as ``yaml.safe_load``.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, TextIO

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from shmem_cli.plumbing.bounded_read import GZIP_MAGIC
from shmem_cli.plumbing.errors import ShmemError, SourcePos, shorten
from shmem_cli.plumbing.frozen import frozen
from shmem_cli.spec.yaml_errors import decode_text, mark_pos, offset_pos, syntax_error
from shmem_cli.spec.yaml_loader import MAX_ALIASES, MAX_ANCHORS, MAX_DEPTH, MAX_NODES, Loader

__all__ = [
    "MAX_BYTES",
    "MAX_ALIASES",
    "MAX_ANCHORS",
    "MAX_DEPTH",
    "MAX_NODES",
    "Document",
    "KeyPath",
    "load_file",
    "read_spec_bytes",
    "shown_name",
    "load_yaml",
]

#: Largest spec file accepted, in bytes (2 MiB: PyYAML reads about 0.6 MB a second of the
#: slowest text, plain words; 8 MiB of them took 17 s before any check could refuse it).
MAX_BYTES = 2 * 1024 * 1024

KeyPath = tuple[Any, ...]

_YAML = "tag:yaml.org,2002:"
_STR = _YAML + "str"
_INT = _YAML + "int"
_FLOAT = _YAML + "float"
_BOOL = _YAML + "bool"
_NULL = _YAML + "null"
_SEQ = _YAML + "seq"
_MAP = _YAML + "map"
_MERGE = _YAML + "merge"
#: the longest YAML integer read: an unsigned long long, shmem's widest type, takes 20 decimal
#: digits (66 characters in binary); a ``0xfff...`` of 3,600 digits made an integer that no
#: message (nor the schema's validator) could write out
MAX_INT_CHARS = 128
_SURROGATE = "[\ud800-\udfff]"  # a pattern: compiled on first use, for non-ASCII text only


# --------------------------------------------------------------------------
# Document


@frozen
class Document:
    """A loaded spec: plain data plus where each value and key came from.

    ``data`` holds only dict/list/str/int/float/bool/None. Positions are keyed
    by *key paths*: tuples of mapping keys and list indexes from the root, as
    in ``("accesses", 0, "index", 1)``; the root is ``()``.
    """

    path: str
    data: Any
    value_positions: Mapping[KeyPath, SourcePos] = field(
        default_factory=dict, repr=False, compare=False
    )
    key_positions: Mapping[KeyPath, SourcePos] = field(
        default_factory=dict, repr=False, compare=False
    )

    def pos(self, *keys: str | int) -> SourcePos | None:
        """Position of the value at ``keys``, else of its nearest existing ancestor."""
        path: KeyPath = tuple(keys)
        while True:
            found = self.value_positions.get(path)
            if found is not None:
                return found
            if not path:
                return None
            path = path[:-1]

    def key_pos(self, *keys: str | int) -> SourcePos | None:
        """Position of the mapping key at ``keys``; falls back to :meth:`pos`."""
        found = self.key_positions.get(tuple(keys))
        return found if found is not None else self.pos(*keys)


# --------------------------------------------------------------------------
# Loading


def _show_tag(tag: str) -> str:
    if tag.startswith(_YAML):
        tag = "!!" + tag[len(_YAML) :]
    return shorten(tag)


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "mapping"
    if isinstance(node, SequenceNode):
        return "list"
    return "value"


class _Converter:
    """Turns a composed node graph into plain data and position tables."""

    def __init__(self, loader: Loader, path: str) -> None:
        self.loader = loader
        self.path = path
        self.nodes = 0
        self.values: dict[KeyPath, SourcePos] = {}
        self.keys: dict[KeyPath, SourcePos] = {}
        self.active: set[int] = set()  # containers being converted (cycle check)
        self.merging: set[int] = set()  # mappings being flattened (cycle check)
        self.pairs_memo: dict[int, list[tuple[Any, Node, Node]]] = {}

    def error(self, message: str, node_or_pos: Node | SourcePos | None) -> ShmemError:
        pos = node_or_pos if not isinstance(node_or_pos, Node) else mark_pos(node_or_pos.start_mark)
        return ShmemError(message, path=self.path, pos=pos)

    def count(self, node: Node, amount: int = 1) -> None:
        self.nodes += amount
        if self.nodes > MAX_NODES:
            raise self.error(
                f"YAML document too large after expanding aliases (limit {MAX_NODES} nodes)",
                node,
            )

    def scalar(self, node: Node) -> Any:
        if not isinstance(node, ScalarNode):  # pragma: no cover - callers check
            raise self.error("expected a plain value", node)
        tag = node.tag
        if tag == _STR:
            if not node.value.isascii() and re.search(_SURROGATE, node.value):
                # a "\ud800" escape: not a character, and it cannot be printed as UTF-8
                raise self.error("invalid YAML: an escape gives a lone UTF-16 surrogate", node)
            return node.value
        constructor: Callable[[ScalarNode], Any] | None = {
            _INT: self.loader.construct_yaml_int,
            _FLOAT: self.loader.construct_yaml_float,
            _BOOL: self.loader.construct_yaml_bool,
            _NULL: self.loader.construct_yaml_null,
        }.get(tag)
        if constructor is None:
            raise self.error(f"unsupported YAML tag '{_show_tag(tag)}'", node)
        if tag == _INT and len(node.value) > MAX_INT_CHARS:
            raise self.error(
                f"integer '{shorten(node.value)}' is {len(node.value):,} characters long; the "
                f"most is {MAX_INT_CHARS} (the widest type, unsigned long long, takes 20 digits)",
                node,
            )
        try:
            return constructor(node)
        except Exception:
            raise self.error(
                f"invalid {_show_tag(tag)} value '{shorten(node.value)}'", node
            ) from None

    def key(self, node: Node) -> Any:
        if not isinstance(node, ScalarNode):
            raise self.error(f"a mapping key must be a plain value, not a {_kind(node)}", node)
        return self.scalar(node)

    def pairs(self, node: MappingNode) -> list[tuple[Any, Node, Node]]:
        """Effective (key, key node, value node) of a mapping, merges applied.

        Same result and order as PyYAML's ``flatten_mapping`` followed by
        ``construct_mapping``, except that duplicate explicit keys are errors.
        """
        memo = self.pairs_memo.get(id(node))
        if memo is not None:
            return memo
        if id(node) in self.merging:
            raise self.error("recursive YAML merge: a mapping merges itself", node)
        self.merging.add(id(node))
        self.count(node, len(node.value))
        merged: list[tuple[Any, Node, Node]] = []
        explicit: list[tuple[Any, Node, Node]] = []
        first_seen: dict[Any, Node] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                if isinstance(value_node, MappingNode):
                    sources = [value_node]
                elif isinstance(value_node, SequenceNode):
                    sources = []
                    for item in value_node.value:
                        if not isinstance(item, MappingNode):
                            raise self.error(
                                "a merge key '<<' takes a mapping or a list of mappings, "
                                f"found a {_kind(item)}",
                                item,
                            )
                        sources.append(item)
                else:
                    raise self.error(
                        "a merge key '<<' takes a mapping or a list of mappings, "
                        f"found a {_kind(value_node)}",
                        value_node,
                    )
                for source in reversed(sources):
                    merged.extend(self.pairs(source))
                continue
            key = self.key(key_node)
            try:
                previous = first_seen.get(key)
            except TypeError:  # pragma: no cover - scalars are hashable
                previous = None
            if previous is not None:
                raise self.error(
                    f"duplicate key '{shorten(key_node.value)}' "
                    f"(first at line {previous.start_mark.line + 1})",
                    key_node,
                )
            first_seen[key] = key_node
            explicit.append((key, key_node, value_node))
        self.merging.discard(id(node))
        if not merged:
            result = explicit
        else:
            table: dict[Any, tuple[Any, Node, Node]] = {}
            for entry in merged + explicit:
                table[entry[0]] = entry
            result = list(table.values())
        self.pairs_memo[id(node)] = result
        return result

    def convert(self, node: Node, where: KeyPath, depth: int) -> Any:
        self.count(node)
        self.values[where] = mark_pos(node.start_mark) or SourcePos(1, 1)
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if depth >= MAX_DEPTH:
            raise self.error(
                f"YAML nesting too deep after expanding aliases (limit {MAX_DEPTH} levels)",
                node,
            )
        if id(node) in self.active:
            raise self.error("recursive YAML alias: a value contains itself", node)
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                if node.tag != _SEQ:
                    raise self.error(
                        f"unsupported YAML tag '{_show_tag(node.tag)}' on a list", node
                    )
                return [
                    self.convert(item, (*where, i), depth + 1) for i, item in enumerate(node.value)
                ]
            if isinstance(node, MappingNode):
                if node.tag != _MAP:
                    raise self.error(
                        f"unsupported YAML tag '{_show_tag(node.tag)}' on a mapping", node
                    )
                result: dict[Any, Any] = {}
                for key, key_node, value_node in self.pairs(node):
                    sub = (*where, key)
                    self.keys[sub] = mark_pos(key_node.start_mark) or SourcePos(1, 1)
                    result[key] = self.convert(value_node, sub, depth + 1)
                return result
            raise self.error("unsupported YAML node", node)  # pragma: no cover
        finally:
            self.active.discard(id(node))


def _too_large(unit: str) -> str:
    """A spec past :data:`MAX_BYTES`, which is read to one byte past it and no further: its
    whole size is not known, and "2097153 bytes" would say a size it does not have."""
    return (
        f"spec file too large: more than {MAX_BYTES:,} {unit} (the limit, {MAX_BYTES >> 20} "
        "MiB); split it into smaller specs (a folder of them is analyzed in one run)"
    )


def load_yaml(source: str | bytes, path: str) -> Document:
    """Parse one YAML spec document safely; every problem is a located ShmemError."""
    if isinstance(source, bytes | bytearray | memoryview):
        raw = bytes(source)
        if len(raw) > MAX_BYTES:
            raise ShmemError(_too_large("bytes"), path=path)
        text = decode_text(raw, path)
    else:
        text = source
        if len(text) > MAX_BYTES:
            raise ShmemError(_too_large("characters"), path=path)
        if text.startswith("\ufeff"):
            text = text[1:]
        nul = text.find("\x00")
        if nul >= 0:
            raise ShmemError(
                "file contains a NUL byte; it looks like a binary file, not a YAML spec",
                path=path,
                pos=offset_pos(text, nul),
            )

    loader: Loader | None = None
    try:
        loader = Loader(text, path)
        root = loader.get_node() if loader.check_node() else None
        if root is None:
            raise ShmemError("empty spec file", path=path, pos=SourcePos(1, 1))
        if loader.check_node():
            raise ShmemError(
                "a spec file must hold exactly one YAML document; another one starts here",
                path=path,
                pos=mark_pos(loader.peek_event().start_mark),  # type: ignore[no-untyped-call]
            )
        if isinstance(root, ScalarNode) and root.tag == _NULL and root.value in ("", "~"):
            raise ShmemError("empty spec file", path=path, pos=mark_pos(root.start_mark))
        if not isinstance(root, MappingNode):
            found = "a list" if isinstance(root, SequenceNode) else "a single value"
            raise ShmemError(
                f"a spec must be a mapping (lines of 'key: value') at the top level, found {found}",
                path=path,
                pos=mark_pos(root.start_mark),
            )
        converter = _Converter(loader, path)
        data = converter.convert(root, (), 0)
    except yaml.YAMLError as exc:
        raise syntax_error(exc, text, path) from None
    except RecursionError:  # pragma: no cover - depth limits come first
        raise ShmemError(f"YAML nesting too deep (limit {MAX_DEPTH} levels)", path=path) from None
    finally:
        if loader is not None:
            loader.dispose()
    return Document(path, data, converter.values, converter.keys)


def load_file(path: str | os.PathLike[str]) -> Document:
    """Read a spec file and :func:`load_yaml` it."""
    return load_yaml(read_spec_bytes(path), shown_name(path))


_stdin_read: tuple[object, bytes] | None = None  # (the stream, what was read from it)

#: the path that means standard input, and the name it is shown under
STDIN_PATH = "-"
STDIN_NAME = "<stdin>"


def shown_name(path: str | os.PathLike[str]) -> str:
    """The name of a spec in messages: the path as given, ``<stdin>`` for ``-``."""
    name = os.fspath(path)
    return STDIN_NAME if name == STDIN_PATH else name


def read_spec_bytes(path: str | os.PathLike[str]) -> bytes:
    """A spec file's bytes, at most one past the size limit (so a huge file is not read whole).

    ``-`` reads standard input."""
    if os.fspath(path) == STDIN_PATH:
        import sys

        global _stdin_read
        # read once: a second reader of the same standard input (--suggest, an error's
        # quoted line) gets the same spec
        if _stdin_read is None or _stdin_read[0] is not sys.stdin:
            _stdin_read = (sys.stdin, _read_stdin(sys.stdin))
        return _stdin_read[1]
    from ..plumbing.bounded_read import (
        read_prefix,  # regular files only: a FIFO would hang the read
    )

    return read_prefix(path, MAX_BYTES + 1, what="spec", code="invalid-spec")


def _read_stdin(stream: TextIO | None) -> bytes:
    """At most one byte past the size limit of standard input; a closed one (``<&-``: None,
    or EBADF) or one open for writing only (EBADF) is refused in words."""
    try:
        if stream is None:
            raise OSError(errno.EBADF, "closed")
        return bytes(stream.buffer.read(MAX_BYTES + 1))
    except (OSError, ValueError) as exc:  # ValueError: closed by this process
        number = exc.errno if isinstance(exc, OSError) else errno.EBADF
        why = (
            "closed or open for writing only"
            if number == errno.EBADF
            else shorten(str(getattr(exc, "strerror", exc)))
        )
        raise ShmemError(
            f"cannot read standard input: {why}; give the spec file's path instead of -",
            path=STDIN_NAME,
            code="invalid-spec",
        ) from None


def error_sources(*errors: ShmemError | None) -> dict[str, tuple[str, ...] | None]:
    """The lines of every file the errors quote, each read once (bounded, as a spec is), for
    the source line quoted under an error; None for a file that cannot be read. A file an
    error names without a line and column is not read: nothing of it is quoted (a cubin, or
    a link out of a Triton entry that was refused for where it leads), nor a gzip file."""
    out: dict[str, tuple[str, ...] | None] = {}
    for err in errors:
        for one in err.all if err is not None else ():
            if one.path is None or one.line is None or one.column is None or one.path in out:
                continue
            try:
                raw = read_spec_bytes(STDIN_PATH if one.path == STDIN_NAME else one.path)
            except ShmemError:
                out[one.path] = None
                continue
            if raw.startswith(GZIP_MAGIC):  # its lines are the unpacked text's: not quoted
                out[one.path] = None
                continue
            out[one.path] = tuple(raw.decode("utf-8", errors="replace").splitlines())
    return out
