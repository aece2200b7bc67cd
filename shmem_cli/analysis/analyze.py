"""The pipeline: spec -> layout -> iteration space -> engine -> result model.

Pure apart from reading spec files; no printing. ``analyze_spec`` is what the
CLI, ``sweep`` and ``lint`` share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..hardware.engine import AccessKind
from ..model import AccessResult, FileResult, Report, SpecSite
from ..plumbing.errors import ShmemError, file_bug, one_line
from ..plumbing.frozen import frozen
from ..spec.budget import check_work
from ..spec.compile import AccessDecl, Roots, SpecFile, load_spec, spec_from_mapping
from ..spec.layout import Layout, Variant, resolve
from ..spec.source import MAX_BYTES, MAX_DEPTH, MAX_NODES, shown_name
from ..spec.space import Space
from ..spec.spec_files import SpecFiles, find_specs
from .cost import cost_requests
from .totals import space_batches


@frozen
class RequestChoice:
    """A request picked by the user: a warp and a flat loop-iteration index."""

    warp: int
    iteration: int = 0


def access_kind(spec: SpecFile, layout: Layout, access: AccessDecl) -> AccessKind:
    """What one lane of ``access`` does (:attr:`Space.kind`)."""
    return Space(spec, layout, access).kind


def checked_space(spec: SpecFile, layout: Layout, access: AccessDecl) -> Space:
    """The access's iteration space for this layout's params, refused if it is too large."""
    try:
        access = access.with_params(layout.params)
    except ShmemError as exc:
        raise exc.located(spec.path) from None
    space = Space(spec, layout, access)
    space.check_size()
    return space


def analyze_access(
    spec: SpecFile,
    layout: Layout,
    access: AccessDecl,
    *,
    choice: RequestChoice | None = None,
    detail: bool = True,
) -> AccessResult:
    """Totals for one access over its whole iteration space."""
    space = checked_space(spec, layout, access)
    access = space.access
    warps, iterations = space.warps, space.iterations
    pick = None
    if choice is not None:
        if not 0 <= choice.warp < warps or not 0 <= choice.iteration < iterations:
            raise ShmemError(
                f"--request {choice.warp}:{choice.iteration} is outside this access's "
                f"{warps} warp(s) x {iterations} iteration(s)"
            )
        pick = (choice.warp, choice.iteration)
    cost = cost_requests(
        space_batches(space),
        space.kind,
        spec.arch,
        warps=warps,
        iterations=iterations,
        where=lambda _warp, iteration: space.loop_values(iteration),
        pick=pick,
        detail=detail,
        lane_accesses=space.lane_accesses,
    )
    site = SpecSite(
        name=access.name,
        array=access.array,
        dtype=layout.arrays[access.array].decl.dtype.name,
        line=access.pos.line if access.pos else None,
        column=access.pos.column if access.pos else None,
        loops=tuple(lp.describe() for lp in access.loops),
    )
    return AccessResult(site=site, cost=cost)


def analyze_spec(
    spec: SpecFile,
    variant: Variant | None = None,
    *,
    choice: RequestChoice | None = None,
    detail: bool = True,
) -> FileResult:
    layout = resolve(spec, variant)
    # refuse a too-large access, or too much work in all, before any work on the others
    check_work(spec, [checked_space(spec, layout, acc) for acc in spec.accesses])
    results = tuple(
        analyze_access(spec, layout, acc, choice=choice, detail=detail) for acc in spec.accesses
    )
    return FileResult(
        path=spec.path,
        name=spec.name,
        accesses=results,
        block=layout.block,
        smem_bytes=layout.smem_bytes,
        spec=spec,
    )


def analyze_path(
    path: str | Path, *, choice: RequestChoice | None = None, roots: Roots = ()
) -> FileResult:
    """Analyze one file; a bad spec becomes a FileResult carrying its error, and so does a bug
    it reaches (:func:`~shmem_cli.plumbing.errors.file_bug`: the other files are analyzed).
    ``roots``: the folders its kernel's files must lie in (:func:`load_spec`)."""
    shown = shown_name(path)  # "<stdin>" for "-"
    try:
        spec = load_spec(path, roots=roots)
        return analyze_spec(spec, choice=choice)
    except ShmemError as exc:
        error = exc.located(shown)
    except Exception as exc:  # a bug: said as this file's error
        error = file_bug(exc, shown)
    return FileResult(path=shown, name=one_line(Path(shown).stem), error=error)


def collect_specs(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their ``*.yaml``/``*.yml`` files, sorted; keep files as given
    (:func:`~shmem_cli.spec.spec_files.find_specs`: a folder that could not be searched is
    itself an entry, its error :func:`analyze_many`'s)."""
    return list(find_specs(paths).paths)


def analyze(
    source: str | Path | Mapping[str, Any], *, choice: RequestChoice | None = None
) -> FileResult:
    """Analyze one spec, given as a path or as a mapping in the spec format.

    Returns the :class:`~shmem_cli.model.FileResult` the JSON output is rendered
    from. Raises :class:`~shmem_cli.plumbing.errors.ShmemError` when the spec is invalid::

        from shmem_cli import analyze
        result = analyze("access_specs/column_read_32x33.yaml")
        assert result.accesses[0].conflict_free
    """
    from ..plumbing import arguments

    if isinstance(source, Mapping):  # plain data within a spec file's bounds, or an error
        limits = {"nodes": MAX_NODES, "depth": MAX_DEPTH, "chars": MAX_BYTES}
        source = arguments.plain("analyze", "source", source, **limits)
    else:
        source = arguments.path("analyze", "source", source)
    if choice is not None and not isinstance(choice, RequestChoice):
        raise arguments.fail("analyze", "choice", "a RequestChoice or None", choice)
    spec = spec_from_mapping(source) if isinstance(source, Mapping) else load_spec(source)
    return analyze_spec(spec, choice=choice)


def analyze_many(
    paths: Iterable[str | Path] | SpecFiles,
    *,
    choice: RequestChoice | None = None,
    roots: Roots = (),
) -> Report:
    """Every spec file of ``paths`` (or of the walk already made) analyzed; a folder that could
    not be searched is its own error. ``roots``: as :func:`analyze_path`'s."""
    found = paths if isinstance(paths, SpecFiles) else find_specs(paths)
    return Report(files=tuple(_result(p, found.error_of(p), choice, roots) for p in found.paths))


def _result(
    path: Path, walk_error: str | None, choice: RequestChoice | None, roots: Roots
) -> FileResult:
    if walk_error is None:
        return analyze_path(path, choice=choice, roots=roots)
    shown = shown_name(path)
    error = ShmemError(walk_error).located(shown)
    return FileResult(path=shown, name=one_line(Path(shown).stem), error=error)
