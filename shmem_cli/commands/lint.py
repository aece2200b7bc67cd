"""``shmem lint`` and ``shmem rules``: bank-conflict checks for CI.

Only argument handling, file and environment I/O and exit codes live here; the
checks are in :mod:`shmem_cli.lint`, the output formats in
:mod:`shmem_cli.render`. Heavy imports happen inside the commands.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..render.checks.formats import FORMATS as CHECK_FORMATS
from .common import (
    CONTEXT,
    MAX_JOBS,
    STDIO,
    ExitCode,
    ShmemCommand,
    check_format_names,
    emit,
    fail_input,
    fail_usage,
    output_options,
    require_paths,
    say_skipped,
)
from .environment import current_environment

if TYPE_CHECKING:
    from ..checks.report import CheckReport, Severity
    from ..lint.config import LintConfig

SEVERITIES = ("error", "warning", "info")


def read_config(config_path: str | None, no_config: bool, cwd: Path) -> LintConfig:
    """[tool.shmem] of ``--config`` or the nearest pyproject.toml (a bad one: exit status 2)."""
    from ..lint.config import LintConfig, find_pyproject, load_config
    from ..plumbing.errors import ShmemError, shorten

    if no_config:
        return LintConfig(base=cwd)
    if config_path is not None:
        if not os.path.lexists(config_path):
            fail_usage(f"config file not found: {shorten(config_path)}")
        source: Path | None = Path(config_path)
    else:
        found = find_pyproject(cwd)
        source = Path(os.path.relpath(found, cwd)) if found is not None else None
    if source is None:
        return LintConfig(base=cwd)
    try:
        return load_config(source)
    except ShmemError as err:
        fail_input(err)


def source_roots() -> tuple[str, ...]:
    """[tool.shmem] source-roots of the nearest pyproject.toml, as the lint reads them: the
    folders a spec's kernel files must lie in (empty: each spec's own tree), for ``analyze``,
    ``sweep`` and ``verify`` alike; called where a spec with a kernel first asks (a plain
    analyze imports no lint)."""
    return read_config(None, False, Path.cwd()).source_roots


def _render(report: CheckReport, fmt: str, fail_on: Severity, color: bool) -> str:
    if fmt == "json":
        from ..render.checks.lint_json import render_lint_json

        return render_lint_json(report, fail_on=fail_on)
    if fmt in CHECK_FORMATS:
        from ..lint.rules import RULES
        from ..render.checks.formats import CheckContext, render_check

        return render_check(report, fmt, CheckContext("shmem lint", RULES.rules, fail_on))
    from ..render.checks.lint_text import render_lint_text

    return render_lint_text(report, color=color)


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="Fail CI on bank conflicts that specs do not accept.",
)
@click.argument("paths", nargs=-1, type=click.Path())
@output_options(check_format_names)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    help="Lowest severity that makes the exit status 1 "
    "(default: [tool.shmem] fail-on, else error).",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    help="Accept the findings recorded in FILE; report and fail only on new ones.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False),
    help="Record every current finding in FILE (atomically; - for standard output) and exit 0.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Skip spec files matching GLOB (relative to the current directory); repeatable.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Read [tool.shmem] from this TOML file instead of the nearest pyproject.toml.",
)
@click.option("--no-config", is_flag=True, help="Ignore pyproject.toml.")
@click.option(
    "--select",
    multiple=True,
    metavar="RULES",
    help="Run only these rules: codes (SH001), code prefixes (SH00) or names, comma-separated "
    "or repeated (default: [tool.shmem] select, else every rule).",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="RULES",
    help="Do not run these rules (as --select; default: [tool.shmem] ignore). "
    "invalid-spec (SH100) always runs.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(0, MAX_JOBS),
    default=0,
    show_default=True,
    help="Worker processes for many files (0: one per CPU core).",
)
@click.option(
    "--no-compile",
    is_flag=True,
    help="Do not compile the .cu kernels that specs name (kernel:): skip their compiled-code "
    "checks (SH007, SH008). A .cubin kernel is still traced.",
)
def lint(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    no_color: bool,
    fail_on: str | None,
    exit_zero: bool,
    baseline: str | None,
    write_baseline: str | None,
    exclude: tuple[str, ...],
    config_path: str | None,
    no_config: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    jobs: int,
    no_compile: bool,
) -> None:
    """Check spec FILES and DIRECTORIES against their bank-conflict expectations.

    Every access must be conflict-free (no request costing more wavefronts than
    its phases with an active lane; an ok* excess over the ideal passes) unless
    its spec states what is accepted: `expect: {max_ways: 2}`,
    `{max_wavefronts_per_request: 4}` or `{conflict_free: false}`, per access
    or for the whole spec. Each problem is a finding with a rule code
    (`shmem rules` lists them), a severity and the file, line and column.

    Directories are searched recursively for *.yaml and *.yml, as by shmem
    analyze, never into an excluded folder. Settings come
    from [tool.shmem] in the nearest pyproject.toml (paths, exclude, fail-on,
    baseline, expect); flags override them. A spec with a kernel: block is
    also checked against its compiled kernel (traced as by shmem trace; a .cu
    needs nvcc, --no-compile skips it).

    Exit status: 0 no findings at or above --fail-on, 1 findings, 2 usage
    errors (unknown option, missing path, bad config or baseline) or an
    invalid spec (SH100: every problem of the spec is reported, as by
    analyze; --exit-zero does not change this).

    \b
    Examples:
      shmem examples --copy access_specs    # the specs used below, in ./access_specs/
      shmem lint access_specs/
      shmem lint access_specs/ --format github
      shmem lint access_specs/ --format sarif -o shmem.sarif
      shmem lint access_specs/ --format junit -o shmem-junit.xml --exit-zero
      shmem lint --write-baseline shmem-baseline.json access_specs/
      shmem lint --baseline shmem-baseline.json access_specs/
    """
    from ..checks.report import CheckReport, Severity
    from ..lint import baseline as baselines
    from ..lint.config import find_repo_root, strings_problem
    from ..lint.core import LintOptions, lint_files
    from ..lint.paths import Excludes, collect_targets, find_walk
    from ..plumbing.errors import ShmemError

    problem = strings_problem("--exclude", exclude, globs=True)  # every spec is matched to each
    if problem is not None:
        fail_usage(problem)
    cwd = Path.cwd()
    config = read_config(config_path, no_config, cwd)
    root = find_repo_root(cwd) or (config.base if config.source else cwd)

    inputs: list[Path]
    if paths:
        inputs = [Path(p) for p in paths]
        require_paths(paths)
    elif config.paths:
        inputs = [config.base / p for p in config.paths]
        require_paths(
            [str(q) for q in inputs],
            stdin=False,
            note=f" (from [tool.shmem] paths in {config.source})",
        )
    else:
        fail_usage("no paths given (and no [tool.shmem] paths in pyproject.toml)")

    from ..plumbing.fsutil import check_outputs

    # the config read ([tool.shmem] of pyproject.toml, --config) is an input of every output,
    # the baseline read of the report (not of --write-baseline, which replaces it on purpose)
    check_outputs((output, write_baseline), [*inputs, *([config.source] if config.source else [])])
    read_baseline = baseline or (str(config.base / config.baseline) if config.baseline else None)
    if write_baseline is None and read_baseline is not None:
        check_outputs((output,), [read_baseline])
    excludes = [Excludes(config.base, config.exclude), Excludes(cwd, exclude)]
    found = find_walk(inputs, excludes)
    say_skipped(found, "lint")
    targets = collect_targets(found, root=root, excludes=excludes)
    if not targets:
        current_environment().err("shmem lint: no spec files to lint")
        sys.exit(ExitCode.OK)

    rules = _rules(select or config.select, ignore or config.ignore)
    options = LintOptions(
        default_expect=config.expect,
        rules=rules,
        compile=not no_compile,
        source_roots=config.source_roots,
        include_roots=config.include_roots,
        build_cache=config.build_cache,
        compile_seconds=config.compile_seconds,
        outputs=tuple(str(o) for o in (output, write_baseline) if o),
    )
    files = lint_files(targets, options, jobs=jobs)
    report = CheckReport(files=files)
    from ..plumbing.fsutil import OVERWRITE

    if any(OVERWRITE in f.message for f in report.findings):  # a kernel's file: keep it
        output = write_baseline = None
    invalid = any(f.code == "SH100" for f in report.findings)

    if write_baseline is not None:
        # '-' is standard output, as for -o (it wrote a file named '-')
        emit(baselines.render_baseline(report.findings), write_baseline)
        n = len(report.findings)
        where = "standard output" if write_baseline == STDIO else write_baseline
        current_environment().err(
            f"shmem lint: wrote {n} finding{'s' if n != 1 else ''} to {where}"
        )
        sys.exit(ExitCode.USAGE if invalid else ExitCode.OK)

    baseline_file = read_baseline
    if baseline_file is not None:
        try:
            accepted = baselines.load_baseline(baseline_file)
        except ShmemError as err:
            fail_input(err)
        report = baselines.apply_baseline(report, accepted)

    threshold = Severity.parse(fail_on) if fail_on else (config.fail_on or Severity.ERROR)
    color = current_environment().color(no_color, output) and fmt == "text"
    emit(_render(report, fmt, threshold, color), output, color=color)

    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        from ..plumbing.fsutil import OutputError, append_text
        from ..render.checks.github import render_step_summary

        try:
            summary = render_step_summary(report, fail_on=threshold)
            append_text(os.environ["GITHUB_STEP_SUMMARY"], summary)
        except OutputError as exc:
            current_environment().err(f"shmem lint: cannot write the step summary: {exc}")
    if output is not None:
        from ..render.checks.lint_text import summary_line

        where = "on standard output" if output == STDIO else f"in {output}"
        current_environment().err(f"shmem lint: {summary_line(report)} (report {where})")

    if invalid:
        sys.exit(ExitCode.USAGE)
    failed = bool(report.failing(threshold))
    sys.exit(ExitCode.FINDINGS if failed and not exit_zero else ExitCode.OK)


def _rules(select: tuple[str, ...], ignore: tuple[str, ...]) -> frozenset[str] | None:
    """The codes of the rules to run (None: all), from --select/--ignore or [tool.shmem]."""
    from ..lint.selection import chosen

    def split(keys: tuple[str, ...]) -> list[str]:
        return [k for key in keys for k in key.split(",") if k.strip()]

    if not select and not ignore:
        return None
    try:
        return chosen(split(select), split(ignore))
    except ValueError as exc:
        fail_usage(str(exc))


@click.command(
    cls=ShmemCommand, context_settings=CONTEXT, short_help="List the lint rules, or document some."
)
@click.argument("names", nargs=-1, metavar="[CODE|NAME]...")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(("text", "json", "markdown")),
    default="text",
    show_default=True,
    help="Output format (markdown: a rules reference page, as in the lint docs).",
)
def rules(names: tuple[str, ...], fmt: str) -> None:
    """List the lint rules, or document the rules named by CODE or NAME.

    Without arguments: one line per rule (code, name, default severity and
    summary). With CODE (SH001) or NAME (bank-conflict) arguments: each rule's
    full documentation, from its docstring: what it checks, when it fires,
    how to fix a finding or accept it in the spec.

    Exit status: 0, or 2 when a CODE or NAME matches no rule.

    \b
    Examples:
      shmem rules
      shmem rules SH001
      shmem rules bank-conflict --format markdown
    """
    from ..lint.rules import RULES
    from ..plumbing.errors import shorten
    from ..render.checks.lint_text import render_rules

    chosen = list(RULES)
    if names:
        chosen = []
        for n in names:
            rule = RULES.lookup(n)
            if rule is None:
                known = ", ".join(r.code for r in RULES)
                fail_usage(f"unknown rule {shorten(n)!r}; known: {known}")
            chosen.append(rule)
    current_environment().out(
        render_rules(chosen, fmt, full=bool(names) or fmt != "text"), nl=False
    )
