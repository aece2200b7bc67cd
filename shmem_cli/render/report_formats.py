"""The formats of a report, one registry for ``shmem analyze``, ``shmem trace`` and
``shmem sweep`` (render/checks/formats.py is its counterpart for the reports that can
fail a check: lint's and verify's).

Every report is drawn through its :class:`ReportView`: as text, and as rich renderables
for the pictures; its JSON is its own ``to_json()``. Each :class:`ReportFormat` draws any
report that has a view: ``text`` and ``json`` are ``--format`` choices of every command,
``svg`` and ``html`` (``picture``) pictures written beside the report (``--svg FILE``,
``--html FILE``). A new format is one function and one :func:`register_format`; a new
kind of report one view and one :func:`register_view` (CONTRIBUTING.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..plumbing import json_text
from ..plumbing.frozen import frozen
from .options import RenderOptions

if TYPE_CHECKING:
    from rich.console import RenderableType


class HasJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def render_json(result: HasJson) -> str:
    """The result's JSON document, indented, with a final newline (no rich import)."""
    return json_text.dumps(result.to_json()) + "\n"


@frozen
class ReportView:
    """How one kind of report is drawn: as text, and as rich renderables (pictures)."""

    text: Callable[[Any, RenderOptions], str]
    renderables: Callable[[Any, RenderOptions], list[RenderableType]]


@frozen
class ReportFormat:
    """One output format: its name, what it draws a report as, and whether it is a picture
    written to a file of its own (``--NAME FILE``) rather than the report itself."""

    name: str
    draw: Callable[[Any, RenderOptions, str], str]  # (report, options, title) -> the output
    picture: bool = False
    help: str = ""  # a picture's --NAME option help


_VIEWS: dict[type, ReportView] = {}


def register_view(report_type: type, view: ReportView) -> None:
    """Draw reports of ``report_type`` (and its subclasses) with ``view``."""
    _VIEWS[report_type] = view


# The built-in views, by the qualified name of the report class they draw: each renderer
# is imported only when a report of its kind is drawn (a plain analyze never loads rich).


def _spec_report() -> ReportView:
    from . import text

    return ReportView(text.render_text, text.report_renderables)


def _overview() -> ReportView:
    from . import overview

    return ReportView(overview.render_overview_text, overview.overview_renderables)


def _trace() -> ReportView:
    from .trace import view

    return ReportView(view.render_trace_text, view.trace_renderables)


def _compared_trace() -> ReportView:
    from .trace import compare

    return ReportView(compare.render_compared_text, compare.compared_renderables)


def _sweep() -> ReportView:
    from . import sweep_text

    return ReportView(sweep_text.render_sweep_text, sweep_text.sweep_renderables)


def _compiled_sweep() -> ReportView:
    from . import compiled_sweep_text as cst

    return ReportView(cst.render_compiled_sweep_text, cst.compiled_sweep_renderables)


_BUILT_IN: dict[str, Callable[[], ReportView]] = {
    "shmem_cli.model.Report": _spec_report,
    "shmem_cli.render.overview.Overview": _overview,
    "shmem_cli.trace.result.TraceResult": _trace,
    "shmem_cli.trace.ncu.compare.ComparedTrace": _compared_trace,
    "shmem_cli.analysis.sweep.results.SweepResult": _sweep,
    "shmem_cli.trace.fixes.compiled_sweep.CompiledSweep": _compiled_sweep,
}


def view_of(report: object) -> ReportView:
    """The view that draws ``report`` (TypeError for a report nothing draws)."""
    for cls in type(report).__mro__:
        if cls not in _VIEWS:
            load = _BUILT_IN.get(f"{cls.__module__}.{cls.__qualname__}")
            if load is None:
                continue
            _VIEWS[cls] = load()
        return _VIEWS[cls]
    raise TypeError(f"no view draws a {type(report).__name__}")


def _text(report: Any, options: RenderOptions, title: str) -> str:
    return view_of(report).text(report, options)


def _json(report: Any, options: RenderOptions, title: str) -> str:
    return render_json(report)


def _picture_renderables(report: Any, options: RenderOptions) -> list[RenderableType]:
    """The report drawn for a picture: always in color, in the content's width."""
    from .export import drawn

    picture = dataclasses.replace(options, color=True, width=None)
    return drawn(view_of(report).renderables(report, picture))


def _svg(report: Any, options: RenderOptions, title: str) -> str:
    from .export import renderables_svg

    renderables = _picture_renderables(report, options)
    return renderables_svg(renderables, title=title, width=options.width)


def _html(report: Any, options: RenderOptions, title: str) -> str:
    from .export import renderables_html

    renderables = _picture_renderables(report, options)
    return renderables_html(renderables, title=title, width=options.width)


#: every format by name, in the order commands offer them
FORMATS: dict[str, ReportFormat] = {
    "text": ReportFormat("text", _text),
    "json": ReportFormat("json", _json),
    "svg": ReportFormat(
        "svg",
        _svg,
        picture=True,
        help="Also write the text report, in color, as an SVG picture to FILE.",
    ),
    "html": ReportFormat(
        "html",
        _html,
        picture=True,
        help="Also write the text report, in color, as a standalone HTML page to FILE.",
    ),
}


def register_format(fmt: ReportFormat) -> None:
    """Offer ``fmt`` in every command that draws reports through this registry."""
    FORMATS[fmt.name] = fmt


def unregister_format(name: str) -> None:
    """Stop offering the format ``name`` (one added for a while, e.g. by a test)."""
    FORMATS.pop(name, None)


def report_formats() -> tuple[str, ...]:
    """The ``--format`` choices: every format that is not a picture."""
    return tuple(name for name, f in FORMATS.items() if not f.picture)


def picture_formats() -> tuple[ReportFormat, ...]:
    return tuple(f for f in FORMATS.values() if f.picture)


def render_report(report: Any, fmt: str, options: RenderOptions, *, title: str = "shmem") -> str:
    """``report`` in format ``fmt`` (a key of :data:`FORMATS`); for a picture,
    ``options.width`` is the page's width (None: the content's)."""
    return FORMATS[fmt].draw(report, options, title)
