"""The linting core: spec files in, findings out.

Reads spec files and nothing else; prints nothing, exits nothing. For each
file: load and analyze it (:mod:`shmem_cli.analysis.analyze`), run every access rule
on every access and every file rule on the file, and turn the rules' hits into
:class:`~.findings.Finding` records placed at the access (or at the fault).

Many files are linted in worker processes (:func:`lint_files`); the result is
the same as linting them one by one, in the order given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.analyze import analyze_spec
from ..checks.report import AccessSummary, CheckedFile, Finding
from ..plumbing.errors import ShmemError, file_bug, one_line
from ..plumbing.frozen import frozen
from ..spec.compile import Expect, SpecFile, load_spec
from ..spec.layout import resolve
from ..spec.space import Space
from .rules import RULES, AccessCheck, FileCheck, Hit, Rule

if TYPE_CHECKING:
    from ..model import AccessResult
    from ..spec.layout import Layout
    from .compiled_compare import Comparison
    from .kernel_trace import KernelUnavailable

#: the rules that need the spec's kernel traced
COMPILED_RULES = frozenset({"SH006", "SH007", "SH008", "SH009"})

#: Below this many files, linting stays in this process (starting workers costs more).
PARALLEL_MIN_FILES = 48
#: Files handed to a worker at a time.
CHUNK_FILES = 16


@frozen
class LintOptions:
    """What a lint run needs besides the files."""

    default_expect: Expect | None = None  # [tool.shmem] expect: under every spec's own
    #: compile a spec's kernel: source with nvcc (False: --no-compile; a .cubin is still read)
    compile: bool = True
    #: the codes of the rules that run (--select/--ignore); None: every rule
    rules: frozenset[str] | None = None
    #: the folders a spec's kernel build may read ([tool.shmem] source-roots); empty: the
    #: spec's repository, or its folder
    source_roots: tuple[str, ...] = ()
    #: libraries' header folders any kernel build may read ([tool.shmem] include-roots)
    include_roots: tuple[str, ...] = ()
    #: the files the run writes (-o, --write-baseline): a kernel may not read one
    outputs: tuple[str, ...] = ()
    #: the folder keeping .cu builds for later runs ([tool.shmem] build-cache; None: none)
    build_cache: str | None = None
    #: the wall time of each nvcc compile of a kernel ([tool.shmem] compile-time-limit)
    compile_seconds: float | None = None

    def runs(self, rule: Rule) -> bool:
        return self.rules is None or rule.code in self.rules


#: the options of a run that gives none (one shared instance: a frozen class's fields are
#: not assigned)
DEFAULT_OPTIONS = LintOptions()


@frozen
class Target:
    """A file to lint: where to read it, and how to name it in findings."""

    path: str
    display: str
    #: why a folder given could not be searched for specs (it stands for its specs), else None
    error: str | None = None


def effective_expect(
    own: Expect | None, spec_level: Expect | None, default: Expect | None
) -> Expect | None:
    """The access's own expectation over the spec's over the configured default, key by key."""
    out: Expect | None = None
    for layer in (default, spec_level, own):
        if layer is not None and not layer.empty:
            out = layer.merged_over(out)
    return out


def _finding(
    rule: Rule,
    hit: Hit,
    display: str,
    *,
    access: str | None = None,
    spec: str | None = None,
    line: int | None = None,
    column: int | None = None,
) -> Finding:
    return Finding(
        code=rule.code,
        rule=rule.name,
        severity=rule.severity,
        path=display,
        line=hit.line if hit.line is not None else line,
        column=hit.column if hit.column is not None else column,
        message=hit.message,
        access=access,
        spec=spec,
        facts=hit.facts,
    )


def lint_file(target: Target, options: LintOptions = DEFAULT_OPTIONS) -> CheckedFile:
    """Lint one spec file; a spec that does not load is an ``invalid-spec`` finding, and so
    is a bug it reaches (:func:`~shmem_cli.plumbing.errors.file_bug`)."""
    try:
        return _lint_file(target, options)
    except Exception as exc:  # a bug: said as this file's error, the others linted
        return _invalid(target, file_bug(exc, target.path), options)


def _lint_file(target: Target, options: LintOptions) -> CheckedFile:
    if target.error is not None:
        return _invalid(target, ShmemError(target.error), options)
    try:
        spec = load_spec(target.path, roots=options.source_roots)
        result = analyze_spec(spec)
    except ShmemError as exc:
        return _invalid(target, exc, options)
    findings = []
    layout = resolve(spec)
    compiled = _compiled(spec, layout, result.accesses, options)
    from .compiled_compare import Comparison
    from .kernel_trace import KernelUnavailable

    if isinstance(compiled, KernelUnavailable) and compiled.error is not None:
        return _invalid(target, compiled.error, options)

    verdicts = compiled.verdicts if isinstance(compiled, Comparison) else ()
    for i, (decl, acc) in enumerate(zip(spec.accesses, result.accesses, strict=True)):
        item = AccessCheck(
            result=acc,
            expect=effective_expect(decl.expect, spec.expect, options.default_expect),
            own=decl.expect,
            space=Space(spec, layout, decl),
            compiled=verdicts[i] if verdicts else None,
            kernel_traced=isinstance(compiled, Comparison),
        )
        for rule in RULES:
            if rule.check_access is None or not options.runs(rule):
                continue
            for hit in rule.check_access(item):
                findings.append(
                    _finding(
                        rule,
                        hit,
                        target.display,
                        access=acc.site.name,
                        spec=spec.name,
                        line=acc.site.line,
                        column=acc.site.column,
                    )
                )
    file_check = FileCheck(target.display, None, spec, compiled)
    for rule in RULES:
        if rule.check_file is not None and options.runs(rule):
            findings.extend(
                _finding(rule, hit, target.display, spec=spec.name, access=hit.access)
                for hit in rule.check_file(file_check)
            )
    return CheckedFile(
        path=target.display,
        name=spec.name,
        accesses=tuple(AccessSummary.of(a) for a in result.accesses),
        findings=tuple(sorted(findings, key=Finding.sort_key)),
    )


def _invalid(target: Target, exc: ShmemError, options: LintOptions) -> CheckedFile:
    """The lint of a spec that is invalid: its problems, nothing else."""
    exc.located(target.path)
    check = FileCheck(target.display, exc)
    findings = [
        _finding(rule, hit, target.display)
        for rule in RULES
        if rule.check_file is not None and options.runs(rule)
        for hit in rule.check_file(check)
    ]
    stem = one_line(Path(target.path).stem)
    return CheckedFile(target.display, stem, (), tuple(sorted(findings, key=Finding.sort_key)))


def _compiled(
    spec: SpecFile,
    layout: Layout,
    results: Sequence[AccessResult],
    options: LintOptions,
) -> Comparison | KernelUnavailable | None:
    """The spec against its kernel's trace, why there is none, or None (no kernel: / skipped)."""
    if spec.kernel is None:
        return None
    from .compiled_compare import compare
    from .kernel_trace import KernelUnavailable, needs_nvcc, trace_spec_kernel

    if not options.compile and needs_nvcc(spec.kernel):
        return None
    if options.rules is not None and not options.rules & COMPILED_RULES:
        return None
    traced = trace_spec_kernel(
        spec.kernel,
        layout.block,
        spec.arch.name,
        options.source_roots,
        options.include_roots,
        options.outputs,
        options.build_cache,
        options.compile_seconds,
    )
    if isinstance(traced, KernelUnavailable):
        return traced
    from ..analysis.invariance import hoistable_loops
    from ..analysis.vectorize import vector_form

    # accesses nvcc is likely to have changed (2: vectorized, 1: hoisted): matched last
    suspects: dict[int, int] = {}
    for i, decl in enumerate(spec.accesses):
        if decl.line is None:
            continue
        if vector_form(spec, layout, decl, spec.runtime_params) is not None:
            suspects[i] = 2
        elif hoistable_loops(spec, layout, decl):
            suspects[i] = 1
    return compare(spec, results, traced, suspects)


def _lint_chunk(args: tuple[Sequence[Target], LintOptions]) -> list[CheckedFile]:
    targets, options = args
    return [lint_file(t, options) for t in targets]


def default_jobs() -> int:
    """The CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def lint_files(
    targets: Iterable[Target], options: LintOptions = DEFAULT_OPTIONS, *, jobs: int = 0
) -> tuple[CheckedFile, ...]:
    """Lint files in the order given, in ``jobs`` worker processes (0: one per core).

    Small runs (fewer than :data:`PARALLEL_MIN_FILES` files) or ``jobs=1`` stay in
    this process.
    """
    todo = list(targets)
    workers = min(jobs or default_jobs(), -(-len(todo) // CHUNK_FILES))
    if workers <= 1 or len(todo) < PARALLEL_MIN_FILES:
        return tuple(lint_file(t, options) for t in todo)
    # the first file, linted here, also builds the parsers and the schema validator
    # that forked workers then inherit instead of each building its own
    first = lint_file(todo[0], options)
    rest = todo[1:]
    chunks = [(rest[i : i + CHUNK_FILES], options) for i in range(0, len(rest), CHUNK_FILES)]
    from ..plumbing.workers import ordered_map  # stops the workers on Ctrl-C, SIGTERM or an error

    # results come in submission order: the output never depends on scheduling
    return (first, *(f for part in ordered_map(_lint_chunk, chunks, workers) for f in part))
