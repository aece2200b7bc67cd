"""The package's stages import each other in one direction only (issue 26).

The graph is tests/test_import_graph.py's: an edge for every import statement of a
module, at module level, inside functions and methods, and under ``if TYPE_CHECKING:``.
The rules, each a stage that must not import another:

* ``hardware`` (the rules) and ``analysis`` (what is built on the cost door) know no
  front end's details and no output: never ``trace``, ``lint``, ``render`` or ``commands``;
* ``render`` draws results and never runs a command; nor does it read a file (the caller
  reads, bounded, and hands over what is drawn);
* ``spec`` and ``verify`` never reach into ``trace`` (the toolchain and SASS reader they
  share with it are ``cuda``);
* ``cuda`` (the toolchain, nvcc arguments, source tree and SASS reader) imports none of
  ``trace``, ``lint``, ``render``, ``commands``, ``spec`` or ``verify``.
"""

from __future__ import annotations

import ast

import pytest

from .test_import_graph import PACKAGE, import_graph, module_names

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "hardware": ("trace", "lint", "render", "commands"),
    "analysis": ("trace", "lint", "render", "commands"),
    "render": ("commands",),
    "spec": ("trace",),
    "verify": ("trace",),
    "cuda": ("trace", "lint", "render", "commands", "spec", "verify"),
}

#: calls that read a file: open(...), Path.read_text/read_bytes, os.read, the bounded readers
FILE_READS = ("open", "read_text", "read_bytes", "read_bounded", "read_prefix", "read_spec_bytes")


def stage(module: str) -> str | None:
    """``shmem_cli.trace.kernel.cubin`` -> ``trace``; None for the top-level modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and _is_package(parts[1])) else None


def _is_package(name: str) -> bool:
    return (PACKAGE / name).is_dir()


def forbidden_edges(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (importer, imported) pair that crosses a forbidden direction."""
    out = []
    for source, targets in sorted(graph.items()):
        banned = FORBIDDEN.get(stage(source) or "", ())
        out += [(source, t) for t in sorted(targets) if stage(t) in banned]
    return out


def test_the_stages_are_found() -> None:
    assert stage("shmem_cli.trace.kernel.cubin") == "trace"
    assert stage("shmem_cli.render") == "render"
    assert stage("shmem_cli.model") is None
    assert set(FORBIDDEN) <= {p.name for p in PACKAGE.iterdir() if p.is_dir()}


def test_a_forbidden_import_is_caught_wherever_it_stands() -> None:
    """A made-up graph: hardware imports a renderer in a function, spec names a trace
    type for mypy; both are caught."""
    graph = {
        "shmem_cli.hardware.engine": {"shmem_cli.render.text", "shmem_cli.hardware.arch"},
        "shmem_cli.spec.compile": {"shmem_cli.trace.result"},
        "shmem_cli.trace.tracer": {"shmem_cli.spec.compile"},
    }
    assert forbidden_edges(graph) == [
        ("shmem_cli.hardware.engine", "shmem_cli.render.text"),
        ("shmem_cli.spec.compile", "shmem_cli.trace.result"),
    ]


def test_the_package_imports_in_the_allowed_directions_only() -> None:
    # TYPE_CHECKING imports and imports inside functions count: the graph holds them all
    assert forbidden_edges(import_graph(module_names())) == []


def _reads(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in FILE_READS:
                found.append(f"{name} at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "render").rglob("*.py")), ids=lambda p: p.name)
def test_a_renderer_reads_no_file(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    assert _reads(ast.parse(path.read_text())) == []


def test_the_file_read_finder_sees_a_read() -> None:
    tree = ast.parse("def f(p):\n    with open(p) as fh:\n        return p.read_text()\n")
    assert _reads(tree) == ["open at line 2", "read_text at line 3"]


#: a folder of the package holds at most this many modules, a module at most this many lines
MAX_MODULES, MAX_LINES = 15, 450


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    crowded = {
        str(f.relative_to(PACKAGE.parent)): n
        for f in folders
        if (n := len(list(f.glob("*.py")))) > MAX_MODULES
    }
    assert crowded == {}


def test_no_module_is_longer_than_450_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
