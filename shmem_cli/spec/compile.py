"""Access specs: from a loaded YAML document to a checked, compiled model.

``compile_spec`` turns a :class:`~shmem_cli.spec.source.Document` into a
:class:`SpecFile`: every expression parsed once, every name checked, every fault
located at ``file:line:column``. Layout numbers that may depend on params
(shapes, pads, offsets, block) stay expressions here; :mod:`shmem_cli.spec.layout`
resolves them for one variant.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hardware import dtypes
from ..hardware.arch import DEFAULT_ARCH, PROFILES, unmeasured_arch
from ..hardware.swizzle import TMA_SWIZZLES, Swizzle
from ..plumbing.errors import ShmemError, SourcePos, one_line, shorten
from .budget import check_accesses, check_text
from .compile_accesses import AccessCompiler
from .expr import CType
from .pitfalls import pitfalls
from .records import (
    DEFAULT_PARAM_TYPE,
    LOOP_TYPE,
    RESERVED_NAMES,
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

if TYPE_CHECKING:
    from ..cuda.sources import SourceTree

__all__ = [
    "AccessDecl",
    "ArrayDecl",
    "DEFAULT_PARAM_TYPE",
    "Expect",
    "KernelDecl",
    "LOOP_TYPE",
    "Located",
    "Roots",
    "Loop",
    "SourceLine",
    "SpecFile",
    "THREAD_NAMES",
    "compile_spec",
    "load_spec",
    "spec_from_mapping",
]


#: the folders a spec's kernel files must lie in, or what gives them when first needed (a spec
#: with a kernel: ``analyze`` reads [tool.shmem] only then)
Roots = tuple[str, ...] | Callable[[], tuple[str, ...]]


def load_spec(path: str | Path, *, roots: Roots = ()) -> SpecFile:
    """Read, validate and compile one spec file. Raises :class:`ShmemError`. ``roots``: the
    folders its kernel's files must lie in ([tool.shmem] source-roots; default: the spec's
    source tree, :func:`~shmem_cli.cuda.sources.tree_for`)."""
    raw = read_spec_bytes(path)
    return compile_spec(load_yaml(raw, shown_name(path)), raw, roots=roots)


def spec_from_mapping(data: Mapping[str, Any], name: str = "<mapping>") -> SpecFile:
    """Compile a spec given as a Python mapping (no positions)."""
    import yaml

    text = yaml.safe_dump(dict(data), sort_keys=False)
    return compile_spec(load_yaml(text, name), text.encode(), confined=False)


def compile_spec(
    doc: Document, raw: bytes | str = b"", *, roots: Roots = (), confined: bool = True
) -> SpecFile:
    """A spec read (``raw``: its text). ``confined``: its kernel's files must lie in its source
    tree (a spec file, or standard input: the tree of the folder shmem runs in); a mapping the
    Python API is given is the caller's own, its files looked at only in the tree, refused
    there by the lint's trace."""
    check_text(doc)  # aliases can repeat a long expression thousands of times
    check_accesses(doc)
    problems = validate(doc) or pitfalls(doc)  # the schema first, then the usual slips
    if problems:
        raise ShmemError.collect(problems)
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return _Compiler(doc, tuple(text.splitlines()), roots, confined).run()


class _Compiler(AccessCompiler):
    """The whole document: arch, block, params, arrays and kernel, then the accesses."""

    def __init__(self, doc: Document, lines: tuple[str, ...], roots: Roots, confined: bool) -> None:
        super().__init__(doc, lines)
        self.roots = roots
        self.confined = confined

    def tree(self, base: Path) -> SourceTree:
        """The folders the kernel's files must lie in: :func:`~shmem_cli.cuda.sources.tree_for`
        of the spec (its repository, else its folder) or of the configured roots; the lint and
        ``analyze`` confine by it alike, before anything is read."""
        from ..cuda.sources import tree_for

        roots = self.roots() if callable(self.roots) else self.roots
        return tree_for(self.path if os.path.isfile(self.path) else base, roots)

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
        name = data.get("name") or one_line(Path(self.path).stem)  # a name is one line
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
            if pname in RESERVED_NAMES:
                raise self.err(
                    f"param {shorten(pname)!r} shadows a built-in name: rename it",
                    "params",
                    pname,
                    key=True,
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
        from ..cuda.launch import values  # a trace's bound on a grid, before a build

        try:
            dims = (grid[0], grid[1], grid[2])
            values.check_dims(dims, "kernel.grid", limit=values.MAX_GRID_BLOCKS)
        except values.LaunchError as exc:
            raise self.err(exc.message, "kernel", "grid") from None
        key_pos: list[tuple[str, SourcePos | None]] = []  # as an error names each
        problems: list[ShmemError] = []  # every malformed value, each at its place
        from ..cuda.sources import confine

        try:  # the kernel read or built: in the tree, as every file a value names
            if self.confined:
                confine(path, self.tree(base), "kernel.source", shown=str(value["source"]))
        except ShmemError as exc:
            problems.append(self.err(exc.message, "kernel", "source"))
        args = []
        for key, arg in (value.get("args") or {}).items():
            text = self.written(arg, "kernel", "args", key)
            text = self.check_value("args", key, text, base, problems)
            args.append((str(key), text))
            key_pos.append((f"args {key}", self.doc.key_pos("kernel", "args", key)))
        consts = []
        for key, const in (value.get("const") or {}).items():
            text = (
                ",".join(self.written(v, "kernel", "const", key, i) for i, v in enumerate(const))
                if isinstance(const, list)
                else self.written(const, "kernel", "const", key)
            )
            text = self.check_value("const", key, text, base, problems)
            consts.append((str(key), text))
            key_pos.append((f"const {key}", self.doc.key_pos("kernel", "const", key)))
        memory = []
        if len(value.get("memory") or {}) > values.MAX_MEMORY_RANGES:  # the trace's bound
            raise self.err(
                f"kernel.memory gives {len(value['memory']):,} ranges; the most is "
                f"{values.MAX_MEMORY_RANGES}: {values.JOIN_RANGES}",
                "kernel",
                "memory",
            )
        for key, text in (value.get("memory") or {}).items():
            if isinstance(key, bool) or not isinstance(key, int | str) or str(key)[:1] == "-":
                raise self.err(  # the schema's pattern is for text keys: YAML's other keys
                    f"kernel.memory: {shorten(repr(key))} is not a device address (the key is "
                    "the address the host program's cudaMalloc returned, 0x... or decimal)",
                    "kernel",
                    "memory",
                    key,
                    key=True,
                )
            # YAML reads 0x7f12a4000000 as a number; the address is said in hex again
            address = f"0x{key:x}" if isinstance(key, int) and not isinstance(key, bool) else key
            text = self.check_value("memory", key, str(text), base, problems)
            memory.append((str(address), text))
            key_pos.append((f"memory {address}", self.doc.key_pos("kernel", "memory", key)))
        params = value.get("params")
        if params is not None:  # "@FILE" (the schema), relative to the spec too
            params = self.check_value("params", None, str(params), base, problems)
        if problems:
            raise ShmemError.collect(problems)
        cluster = None
        if value.get("cluster") is not None:
            c = [int(x) for x in value["cluster"]] + [1] * (3 - len(value["cluster"]))
            cluster = (c[0], c[1], c[2])
            try:
                values.check_dims(cluster, "kernel.cluster", limit=values.MAX_CLUSTER_CTAS)
                values.check_whole_clusters(dims, cluster, option="kernel.grid")
            except values.LaunchError as exc:
                raise self.err(exc.message, "kernel", "cluster") from None
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
            memory=tuple(memory),
            params=params,
            cluster=cluster,
            nvcc=nvcc,
            dynamic_smem=int(value.get("dynamic_smem", 0)),
            pos=self.doc.pos("kernel"),
            nvcc_pos=nvcc_pos,
            spec_path=self.path,
            key_pos=tuple(key_pos),
        )

    def written(self, value: Any, *keys: str | int) -> str:
        """A launch value's text: a YAML number past a double's range (``1.0e+400``, which
        YAML reads as inf) and a hexadecimal integer (YAML reads ``0x3f800000`` as a number,
        and a launch takes hexadecimal as raw bits: a double's ``0x3ff0000000000000`` is
        1.0, its decimal 4.6e18) as the spec writes them, for the check to say them so."""
        text = str(value)
        pos = self.doc.pos(*keys)
        if isinstance(value, bool) or not isinstance(value, int | float) or pos is None:
            return text
        if pos.line > len(self.lines):
            return text
        line = self.lines[pos.line - 1][pos.column - 1 :]
        token = re.split(r"[\s,\]}#]", line, maxsplit=1)[0]
        if isinstance(value, float) and math.isinf(value):
            return text if "inf" in token.lower() else token
        hexadecimal = re.fullmatch(r"([+-]?)0x([0-9a-fA-F_]+)", token)
        if isinstance(value, int) and hexadecimal:
            digits = hexadecimal.group(2).replace("_", "")
            if digits and int(digits, 16) == abs(value):  # the token is this value's
                return f"{hexadecimal.group(1)}0x{digits}"
        return text

    def check_value(
        self, part: str, key: Any, text: str, base: Path, problems: list[ShmemError]
    ) -> str:
        """``text`` with the file it names taken from the spec's folder (``@FILE``, a tensor
        map's ``data=@FILE``: cuda.launch.files); a value malformed whatever the kernel
        (:func:`check_arg_form`, :func:`check_typed_form` of cuda.launch.values), or naming no
        regular file that can be read, is added to ``problems``: the spec's error, at the
        value, before any trace. What only the compiled kernel says (a parameter's or
        variable's name, the value's fit to its type) is the trace's."""
        from ..cuda.launch import files, values
        from ..cuda.sources import confine

        name = f"0x{key:x}" if isinstance(key, int) and part == "memory" else str(key)
        where = f"kernel.{part}" + (f" {shorten(name)}" if key is not None else "")
        keys = ("kernel", part) if key is None else ("kernel", part, key)
        placed = files.rebased(text, base)
        try:
            if part == "args":
                values.check_arg_form(str(key), text, where)
            elif part != "params":
                values.check_typed_form(text, where)
            shown = files.named_file(text)
            tree = self.tree(base)
            if shown and self.confined:  # confined to the tree before its inode is looked at
                confine(str(files.named_file(placed)), tree, where + ":", shown=shown)
            files.check_file(placed, where, shown, tree.inside)
        except ShmemError as exc:  # values.LaunchError, or a file out of the tree
            problems.append(self.err(exc.message, *keys))
        return placed

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
