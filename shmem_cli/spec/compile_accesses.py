"""Access specs' accesses: each one's op, array, index, loops, predicate and expectation,
compiled and checked (the part of :mod:`shmem_cli.spec.compile` that reads ``accesses:``),
and the located errors and expressions the whole compiler shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..hardware import ops
from ..hardware.dtypes import DType
from ..hardware.ops import ATOMIC_NAMES, MATRIX_OPS, SPEC_OPS
from ..plumbing.errors import ShmemError, SourcePos, shorten
from .expr import CType, compile_expr
from .records import (
    LOOP_TYPE,
    RESERVED_NAMES,
    THREAD_NAMES,
    AccessDecl,
    ArrayDecl,
    Expect,
    Located,
    Loop,
    SourceLine,
)
from .source import Document


class AccessCompiler:
    """Compiles the accesses of one document; :class:`shmem_cli.spec.compile` builds on it."""

    def __init__(self, doc: Document, lines: tuple[str, ...]) -> None:
        self.doc = doc
        self.lines = lines
        self.path = doc.path

    def err(self, message: str, *keys: str | int, key: bool = False) -> ShmemError:
        pos = self.doc.key_pos(*keys) if key else self.doc.pos(*keys)
        return ShmemError(message, path=self.path, pos=pos)

    def expr_pos(self, *keys: str | int) -> SourcePos | None:
        pos = self.doc.pos(*keys)
        if pos is None:
            return None
        if 0 < pos.line <= len(self.lines):
            line = self.lines[pos.line - 1]
            if pos.column - 1 < len(line) and line[pos.column - 1] in "'\"":
                return pos.shifted(1)
        return pos

    def compile_expr(self, value: Any, names: Mapping[str, CType], *keys: str | int) -> Located:
        pos = self.expr_pos(*keys)
        expr = compile_expr(value, names, path=self.path, pos=pos)
        return Located(expr, pos, str(value))

    @staticmethod
    def mark_barriers(accesses: tuple[AccessDecl, ...]) -> tuple[AccessDecl, ...]:
        """A loop marked ``barrier: true`` in one access marks the loop of that name in all."""
        names = {lp.var for acc in accesses for lp in acc.loops if lp.barrier}
        if not names:
            return accesses
        return tuple(
            replace(acc, loops=tuple(replace(lp, barrier=lp.var in names) for lp in acc.loops))
            for acc in accesses
        )

    def compile_line(self, value: Any, i: int) -> SourceLine | None:
        if value is None:
            return None
        pos = self.doc.pos("accesses", i, "line")
        if isinstance(value, int):
            return SourceLine(value, None, pos)
        file, _, number = str(value).rpartition(":")
        return SourceLine(int(number), file, pos)

    def compile_expect(self, value: Any, *keys: str | int) -> Expect | None:
        if value is None:
            return None
        return Expect(
            max_ways=value.get("max_ways"),
            max_wavefronts_per_request=value.get("max_wavefronts_per_request"),
            conflict_free=value.get("conflict_free"),
            pos=self.doc.pos(*keys),
        )

    def compile_loops(
        self,
        loop: Mapping[str, Any] | None,
        i: int,
        params: Mapping[str, int],
        pnames: Mapping[str, CType],
    ) -> tuple[Loop, ...]:
        if not loop:
            return ()
        loops = []
        for var, spec in loop.items():
            where: tuple[str | int, ...] = ("accesses", i, "loop", var)
            if var in RESERVED_NAMES or var in params:
                raise self.err(
                    f"loop variable {shorten(var)!r} shadows a built-in name or param: rename it",
                    *where,
                    key=True,
                )
            if not isinstance(var, str) or not var.isidentifier():
                raise self.err(
                    f"loop variable {shorten(var)!r} is not a C identifier", *where, key=True
                )
            pos = self.doc.pos(*where)
            ctype = LOOP_TYPE
            barrier = False
            if isinstance(spec, Mapping):  # {values: <range or list>, type:, barrier:}
                from .expr.ctype import by_name

                if "type" in spec:
                    try:
                        ctype = by_name(str(spec["type"]))
                    except ValueError as exc:
                        raise self.err(str(exc), *where, "type") from None
                barrier = bool(spec.get("barrier", False))
                spec = spec["values"]
                where = (*where, "values")
            if isinstance(spec, list):
                lp = Loop(var, tuple(int(v) for v in spec), pos=pos, ctype=ctype, barrier=barrier)
                for k, v in enumerate(spec):
                    if not lp.fits(v):
                        raise self.err(
                            f"loop value {shorten(v)} does not fit in the loop variable's type "
                            f"({lp.type_text()})",
                            *where,
                            k,
                        )
                loops.append(lp)
                continue
            text = str(spec)
            head, _, step_text = text.partition(":")
            lo_text, sep, hi_text = head.partition("..")
            if not sep:
                raise self.err(
                    f"loop range {shorten(text)!r} must look like a..b or a..b:step", *where
                )
            start = self.expr_pos(*where)
            parts = []
            for part, offset in (
                (lo_text, 0),
                (hi_text, len(lo_text) + 2),
                (step_text, len(head) + 1),
            ):
                body = part.strip() or "1"
                at = start.shifted(offset + len(part) - len(part.lstrip())) if start else None
                try:
                    expr = compile_expr(body, pnames, path=self.path, pos=at)
                except ShmemError as exc:
                    raise ShmemError(
                        f"loop range {shorten(text)!r}: {exc.message}", path=self.path, pos=exc.pos
                    ) from None
                parts.append(Located(expr, at, body))
            bounds = (parts[0], parts[1], parts[2])
            try:
                loop_decl = Loop(var, None, pos=pos, bounds=bounds, ctype=ctype, barrier=barrier)
                loops.append(loop_decl.resolved(params))
            except ShmemError as exc:
                raise exc.located(self.path) from None
        return tuple(loops)

    def compile_access(
        self,
        i: int,
        acc: Mapping[str, Any],
        arrays: Mapping[str, ArrayDecl],
        params: Mapping[str, int],
        pnames: Mapping[str, CType],
    ) -> AccessDecl:
        aname = acc["array"]
        if aname not in arrays:
            import difflib

            hint = difflib.get_close_matches(str(aname), list(arrays), n=1)
            more = (
                f" (did you mean {shorten(hint[0])!r}?)"
                if hint
                else f"; arrays: {shorten(', '.join(arrays), 200)}"
            )
            raise self.err(f"unknown array {shorten(aname)!r}{more}", "accesses", i, "array")
        arr = arrays[aname]
        op = acc.get("op", ops.DEFAULT_OP)
        assert op in SPEC_OPS
        loops = self.compile_loops(acc.get("loop"), i, params, pnames)
        seen: set[str] = set()
        for lp in loops:
            if lp.var in seen:
                raise self.err(
                    f"loop variable {shorten(lp.var)!r} appears twice", "accesses", i, "loop"
                )
            seen.add(lp.var)
        names = dict(THREAD_NAMES)
        names.update(pnames)
        names.update({lp.var: lp.ctype for lp in loops})
        index_raw = acc["index"]
        if len(index_raw) != len(arr.shape):
            raise self.err(
                f"array {shorten(aname)!r} has {len(arr.shape)} dimension(s) but the index has "
                f"{len(index_raw)}",
                "accesses",
                i,
                "index",
            )
        index = tuple(
            self.compile_expr(v, names, "accesses", i, "index", k) for k, v in enumerate(index_raw)
        )
        when = (
            self.compile_expr(acc["when"], names, "accesses", i, "when") if "when" in acc else None
        )
        matrices = int(acc.get("matrices", 1))
        trans = bool(acc.get("trans", False))
        atomic = acc.get("atomic", ops.DEFAULT_ATOMIC)
        assert atomic in ATOMIC_NAMES
        where = ("accesses", i)
        if op in MATRIX_OPS:
            if arr.dtype.size != 2:
                raise self.err(
                    f"{op} moves 16-bit elements (8x8 b16 matrices) but array "
                    f"{shorten(aname)!r} holds "
                    f"{arr.dtype.name} ({arr.dtype.size} bytes)",
                    *where,
                    "op",
                )
        else:
            for key in ("matrices", "trans"):
                if key in acc:
                    raise self.err(
                        f"'{key}' only applies to ldmatrix/stmatrix, not {op}",
                        *where,
                        key,
                        key=True,
                    )
        if ops.get(op).atomic:
            refused = atomic_refusal(ops.atomic(atomic), arr.dtype)
            if refused:
                raise self.err(refused, *where, "array")
        elif "atomic" in acc:
            raise self.err(
                f"'atomic' only applies to op: atomic, not {op}", *where, "atomic", key=True
            )
        name = acc.get("name") or f"{aname} #{i}"
        return AccessDecl(
            name=str(name),
            array=aname,
            op=op,
            index=index,
            loops=loops,
            when=when,
            matrices=matrices,
            trans=trans,
            atomic=atomic,
            expect=self.compile_expect(acc.get("expect"), *where, "expect"),
            pos=self.doc.pos(*where),
            line=self.compile_line(acc.get("line"), i),
        )


def atomic_widths() -> str:
    """Which elements each atomic a spec may name takes, from the op vocabulary: ``inc and
    add take 4-byte integers; exch and cas 4- and 8-byte integers and 16-byte elements``."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for kind in ops.ATOMICS:
        if kind.in_spec:
            groups.setdefault(kind.widths, []).append(kind.name)
    parts = []
    for widths, names in groups.items():
        ints = "- and ".join(str(w) for w in widths if w <= 8)
        wide = " and ".join(f"{w}-byte elements" for w in widths if w > 8)
        took = " and ".join(x for x in (f"{ints}-byte integers" if ints else "", wide) if x)
        parts.append(f"{' and '.join(names)} take{'s' if len(names) == 1 else ''} {took}")
    return "; ".join(parts)


def atomic_refusal(kind: ops.AtomicKind, dtype: DType) -> str | None:
    """Why a spec's ``atomic: KIND`` on elements of ``dtype`` is refused (None: it is not):
    the element sizes each atomic takes are its ``widths`` (4 and 8 bytes: integers only)."""
    if dtype.size in kind.widths and (dtype.integer or dtype.size > 8):
        return None
    loop = dtype.size in (4, 8) and kind.name in ("inc", "add")
    why = (
        f"atomics on {dtype.name} compile to a compare-and-swap loop (ATOMS.CAST.SPIN) whose "
        "cost depends on run-time contention"
        if loop
        else f"atomic: {kind.name} on {dtype.name} ({dtype.size} bytes) is not modelled"
    )
    return f"{why}; {atomic_widths()}"
