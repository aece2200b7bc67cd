"""Access specs: from a loaded YAML document to a checked, compiled model.

``compile_spec`` turns a :class:`~shmem_cli.spec.source.Document` into a
:class:`SpecFile`: every expression parsed once, every name checked, every fault
located at ``file:line:column``. Layout numbers that may depend on params
(shapes, pads, offsets, block) stay expressions here; :mod:`shmem_cli.spec.layout`
resolves them for one variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..hardware import dtypes
from ..hardware.arch import DEFAULT_ARCH, PROFILES, unmeasured_arch
from ..hardware.ops import ATOMIC_NAMES, MATRIX_OPS, SPEC_OPS
from ..hardware.swizzle import TMA_SWIZZLES, Swizzle
from ..plumbing.errors import ShmemError, SourcePos, shorten
from .budget import check_text
from .expr import CType, compile_expr
from .pitfalls import pitfalls
from .records import (
    DEFAULT_PARAM_TYPE,
    LOOP_TYPE,
    THREAD_NAMES,
    AccessDecl,
    ArrayDecl,
    Expect,
    KernelDecl,
    Located,
    Loop,
    SourceLine,
    SpecFile,
)
from .schema import validate
from .source import Document, load_yaml, read_spec_bytes, shown_name

__all__ = [
    "AccessDecl",
    "ArrayDecl",
    "DEFAULT_PARAM_TYPE",
    "Expect",
    "KernelDecl",
    "LOOP_TYPE",
    "Located",
    "Loop",
    "SourceLine",
    "SpecFile",
    "THREAD_NAMES",
    "compile_spec",
    "load_spec",
    "spec_from_mapping",
]


def load_spec(path: str | Path) -> SpecFile:
    """Read, validate and compile one spec file. Raises :class:`ShmemError`."""
    raw = read_spec_bytes(path)
    return compile_spec(load_yaml(raw, shown_name(path)), raw)


def spec_from_mapping(data: Mapping[str, Any], name: str = "<mapping>") -> SpecFile:
    """Compile a spec given as a Python mapping (no positions)."""
    import yaml

    text = yaml.safe_dump(dict(data), sort_keys=False)
    return compile_spec(load_yaml(text, name), text.encode())


def compile_spec(doc: Document, raw: bytes | str = b"") -> SpecFile:
    check_text(doc)  # aliases can repeat a long expression thousands of times
    problems = validate(doc) or pitfalls(doc)  # the schema first, then the usual slips
    if problems:
        raise ShmemError.collect(problems)
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return _Compiler(doc, tuple(text.splitlines())).run()


class _Compiler:
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

    def run(self) -> SpecFile:
        data = self.doc.data
        arch_name = data.get("arch", DEFAULT_ARCH)
        if arch_name not in PROFILES:
            raise self.err(unmeasured_arch(shorten(arch_name)), "arch")
        params, ptypes = self.compile_params(data.get("params") or {})
        pnames = dict(ptypes)
        block_raw = data["block"]
        block = tuple(self.compile_expr(v, pnames, "block", i) for i, v in enumerate(block_raw))
        arrays: dict[str, ArrayDecl] = {}
        for aname, adata in data["arrays"].items():
            if aname in THREAD_NAMES or aname in params:
                raise self.err(
                    f"array name {shorten(aname)!r} clashes with a built-in or param",
                    "arrays",
                    aname,
                    key=True,
                )
            arrays[aname] = self.compile_array(aname, adata, pnames)
        expect = self.compile_expect(data.get("expect"), "expect")
        accesses = tuple(
            self.compile_access(i, acc, arrays, params, pnames)
            for i, acc in enumerate(data["accesses"])
        )
        names_seen: dict[str, int] = {}
        for i, acc in enumerate(accesses):
            if acc.name in names_seen:
                raise self.err(
                    f"two accesses are named {shorten(acc.name)!r} "
                    f"(also accesses[{names_seen[acc.name]}])",
                    "accesses",
                    i,
                    "name",
                )
            names_seen[acc.name] = i
        name = data.get("name") or Path(self.path).stem
        kernel = self.compile_kernel(data.get("kernel"))
        if kernel is None:
            for i, acc in enumerate(accesses):
                if acc.line is not None:
                    raise self.err(
                        "'line' names the access's line in the kernel source: it needs a "
                        "kernel: block (source, name) at the top of the spec",
                        "accesses",
                        i,
                        "line",
                        key=True,
                    )
        accesses = self.mark_barriers(accesses)
        return SpecFile(
            path=self.path,
            name=str(name),
            block=block,
            params=params,
            param_types=ptypes,
            runtime_params=frozenset(
                p
                for p, v in (data.get("params") or {}).items()
                if isinstance(v, Mapping) and v.get("runtime") is True
            ),
            arrays=arrays,
            accesses=accesses,
            expect=expect,
            arch=PROFILES[arch_name],
            pos=self.doc.pos(),
            lines=self.lines,
            param_pos={p: self.doc.pos("params", p) for p in params},
            kernel=kernel,
        )

    def compile_params(self, raw: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, CType]]:
        """Values and C types of the params: ``N: 4`` is an int, ``N: {value: 4, type:
        unsigned}`` any of int, unsigned, long long, unsigned long long."""
        from .expr.ctype import by_name

        params: dict[str, int] = {}
        ptypes: dict[str, CType] = {}
        for pname, spec in raw.items():
            if pname in THREAD_NAMES:
                raise self.err(
                    f"param {shorten(pname)!r} shadows a built-in name", "params", pname, key=True
                )
            where: tuple[str, ...] = ("params", pname)
            ctype = DEFAULT_PARAM_TYPE
            value = spec
            if isinstance(spec, Mapping):
                value = spec["value"]
                where = ("params", pname, "value")
                if "type" in spec:
                    try:
                        ctype = by_name(str(spec["type"]))
                    except ValueError as exc:
                        raise self.err(str(exc), "params", pname, "type") from None
            if not ctype.fits(value):
                raise self.err(
                    f"param {shorten(pname)!r} = {shorten(value)} does not fit in "
                    f"{ctype.spelling} ({ctype.min}..{ctype.max})"
                    + (
                        "; give it a wider type: {value: ..., type: long long}"
                        if ctype.bits == 32
                        else ""
                    ),
                    *where,
                )
            params[pname] = int(value)
            ptypes[pname] = ctype
        return params, ptypes

    def compile_kernel(self, value: Any) -> KernelDecl | None:
        """The ``kernel:`` block, its paths taken relative to the spec file."""
        if value is None:
            return None
        base = Path(self.path).parent if self.path not in ("-", "<stdin>") else Path()
        path = str(base / str(value["source"]))
        grid = [int(g) for g in value.get("grid", [1])]
        grid += [1] * (3 - len(grid))
        from ..trace.kernel import values  # the trace's bound on a grid, checked before a build

        try:
            dims = (grid[0], grid[1], grid[2])
            values.check_dims(dims, "kernel.grid", limit=values.MAX_GRID_BLOCKS)
        except values.LaunchError as exc:
            raise self.err(exc.message, "kernel", "grid") from None
        args = []
        for key, arg in (value.get("args") or {}).items():
            text = str(arg)
            if text.startswith("@"):  # a buffer file, relative to the spec too
                text = "@" + str(base / text[1:])
            args.append((str(key), text))
        consts = []
        for key, const in (value.get("const") or {}).items():
            text = ",".join(str(v) for v in const) if isinstance(const, list) else str(const)
            if text.startswith("@"):  # a file, relative to the spec too
                text = "@" + str(base / text[1:])
            consts.append((str(key), text))
        nvcc = tuple(str(a) for a in value.get("nvcc") or ())
        nvcc_pos = tuple(self.doc.pos("kernel", "nvcc", i) for i in range(len(nvcc)))
        from ..cuda.nvcc_args import NvccArgError, check_nvcc_args

        try:  # the allowlist; the source tree is checked when the kernel is traced
            check_nvcc_args(nvcc, base=base, inside=lambda _: True)
        except NvccArgError as exc:
            raise self.err(exc.message, "kernel", "nvcc", exc.index) from None
        return KernelDecl(
            source=str(value["source"]),
            path=path,
            name=value.get("name"),
            grid=(grid[0], grid[1], grid[2]),
            args=tuple(args),
            consts=tuple(consts),
            nvcc=nvcc,
            dynamic_smem=int(value.get("dynamic_smem", 0)),
            pos=self.doc.pos("kernel"),
            nvcc_pos=nvcc_pos,
            spec_path=self.path,
        )

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

    def compile_array(
        self, name: str, adata: Mapping[str, Any], pnames: Mapping[str, CType]
    ) -> ArrayDecl:
        dt = dtypes.lookup(str(adata["dtype"]))
        if dt is None:
            import difflib

            hint = difflib.get_close_matches(str(adata["dtype"]), dtypes.known_names(), n=1)
            more = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise self.err(
                f"unknown dtype {shorten(adata['dtype'])!r} for array {name!r}{more}",
                "arrays",
                name,
                "dtype",
            )
        shape = tuple(
            self.compile_expr(v, pnames, "arrays", name, "shape", i)
            for i, v in enumerate(adata["shape"])
        )
        pad = self.compile_expr(adata.get("pad", 0), pnames, "arrays", name, "pad")
        offset = (
            self.compile_expr(adata["offset"], pnames, "arrays", name, "offset")
            if "offset" in adata
            else None
        )
        swz = self.compile_swizzle(adata.get("swizzle"), name)
        return ArrayDecl(name, dt, shape, pad, offset, swz, self.doc.key_pos("arrays", name))

    def compile_swizzle(self, value: Any, array: str) -> Swizzle | None:
        if value is None or value == "none":
            return None
        if isinstance(value, str):
            return TMA_SWIZZLES[value]
        try:
            return Swizzle.cute(int(value["bits"]), int(value["base"]), int(value["shift"]))
        except ValueError as exc:
            raise self.err(str(exc), "arrays", array, "swizzle") from None

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
            if var in THREAD_NAMES or var in params:
                raise self.err(
                    f"loop variable {shorten(var)!r} shadows a built-in name or param",
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
        op = acc.get("op", "load")
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
        atomic = acc.get("atomic", "inc")
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
        if op == "atomic":
            if not (arr.dtype.integer and arr.dtype.size == 4):
                raise self.err(
                    f"atomics on {arr.dtype.name} compile to a compare-and-swap loop "
                    "(ATOMS.CAST.SPIN) whose cost depends on run-time contention; shmem models "
                    "32-bit integer atomics (int32/uint32) only",
                    *where,
                    "array",
                )
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
