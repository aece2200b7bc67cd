"""No import circle among the package's modules (issues 11, 19 and 26).

The graph is built from the source with ``ast``: an edge for every import statement a
module holds, wherever it stands: at module level, under ``if``/``try``, inside
functions and methods (a lazy import kept for start-up time is still a dependency), and
under ``if TYPE_CHECKING:`` (a module that needs another's types to be read depends on
it). ``from . import x`` is an edge to ``x``; no edge goes from a module back to a
package it lives in, which Python initializes first. A circle in that graph makes the
import order matter and the modules one unit in all but name.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "shmem_cli"


def module_names(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(
    body: list[ast.stmt], *, type_checking: bool = True
) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in ``body``, at any depth; those under ``if TYPE_CHECKING:``
    too unless ``type_checking`` is False (their ``else:`` counts either way)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
            continue
        if (
            not type_checking
            and isinstance(node, ast.If)
            and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        ):
            found += _imports(node.orelse, type_checking=False)
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, ()):
                if isinstance(child, ast.stmt):
                    found += _imports([child], type_checking=type_checking)
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    found += _imports(child.body, type_checking=type_checking)
    return found


def import_graph(modules: dict[str, Path], *, type_checking: bool = True) -> dict[str, set[str]]:
    """module -> the package modules it imports, at import time, later, or (with
    ``type_checking``) only for the type checker."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        edges: set[str] = set()
        body = ast.parse(path.read_text()).body
        for node in _imports(body, type_checking=type_checking):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = here
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                mod = node.module or ""
                if node.level:
                    mod = f"{base}.{mod}" if mod else base
                targets = [mod] + [f"{mod}.{alias.name}" for alias in node.names]
            # a module's own packages are initialized before it: no edge back to them
            edges |= {t for t in targets if t in modules and not f"{name}.".startswith(f"{t}.")}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_package() -> None:
    graph = import_graph(module_names())
    assert "shmem_cli.spec.records" in graph["shmem_cli.spec.compile"]
    assert "shmem_cli.trace.emulator.op_table" in graph["shmem_cli.trace.emulator.ops.integer"]
    assert "shmem_cli.spec.expr" in graph["shmem_cli.spec.compile"]
    # an import inside a function counts: the API's lazy import of the analysis
    assert "shmem_cli.analysis.analyze" in graph["shmem_cli"]
    # one under TYPE_CHECKING counts too (the result model names SpecFile for mypy), unless
    # asked to leave those out
    assert "shmem_cli.spec.records" in graph["shmem_cli.model"]
    running = import_graph(module_names(), type_checking=False)
    assert "shmem_cli.spec.records" not in running["shmem_cli.model"]


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_circle() -> None:
    assert cycles(import_graph(module_names())) == []
