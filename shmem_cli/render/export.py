"""Pictures of the report: the terminal view as a standalone SVG image or HTML page.

The same renderables as the terminal (:func:`shmem_cli.render.text.report_renderables`)
are printed to a recording rich console and exported, so the picture shows exactly
what ``shmem analyze`` prints, in color. Returns strings; the CLI writes the files.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import inspect
import io
import re
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.terminal_theme import TerminalTheme
from rich.text import Text

from ..model import Report
from .options import RenderOptions
from .plain import MAX_DRAWN_LINES
from .text import report_renderables

# A dark terminal whose conflict colors (green, yellow, orange, red, magenta) are far apart
THEME = TerminalTheme(
    (33, 37, 43),
    (220, 223, 228),
    [
        (40, 44, 52),  # black
        (239, 83, 80),  # red
        (152, 195, 121),  # green
        (229, 192, 123),  # yellow
        (97, 175, 239),  # blue
        (198, 120, 221),  # magenta
        (86, 182, 194),  # cyan
        (220, 223, 228),  # white
    ],
    [
        (92, 99, 112),
        (255, 110, 103),
        (181, 224, 146),
        (240, 210, 150),
        (130, 195, 250),
        (220, 150, 240),
        (120, 210, 220),
        (255, 255, 255),
    ],
)
MIN_WIDTH = 60
MAX_WIDTH = 400

# rich's SVG template without the web font URLs (the picture must not fetch anything) and
# with xml:space="preserve", without which some renderers (librsvg) drop leading spaces
_SVG_FORMAT: str = re.sub(
    r",\s*url\([^)]*\)\s*format\([^)]*\)",
    "",
    str(inspect.signature(Console.export_svg).parameters["code_format"].default),
).replace("<svg ", '<svg xml:space="preserve" ', 1)

_HTML_FORMAT = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>{title}</title>
<style>
{{stylesheet}}
body {{{{
    color: {{foreground}};
    background-color: {{background}};
}}}}
</style>
</head>
<body>
<pre style="font-family:Menlo,'DejaVu Sans Mono',Consolas,monospace;line-height:1.25">\
<code style="font-family:inherit">{{code}}</code></pre>
</body>
</html>
"""


def drawn(renderables: Sequence[RenderableType]) -> list[RenderableType]:
    """``renderables`` up to :data:`~.plain.MAX_DRAWN_LINES` lines (a table past it cut after
    the rows that fit), then a line that says where the picture stops; all of them where they
    fit."""
    total = sum(_lines(r) for r in renderables)
    if total <= MAX_DRAWN_LINES:
        return list(renderables)
    out: list[RenderableType] = []
    left = MAX_DRAWN_LINES
    for r in _flat(renderables):
        n = _lines(r)
        if n > left:
            if isinstance(r, Table) and left > 1:
                out.append(_first_rows(r, left - 1))
            break
        out.append(r)
        left -= n
    out.append(
        Text(
            f"(the picture stops here, at {MAX_DRAWN_LINES:,} of the report's {total:,} lines: "
            "a picture draws each line in milliseconds; the text report, -o FILE, holds them "
            "all)",
            style="bold yellow",
        )
    )
    return out


def _flat(renderables: Sequence[RenderableType]) -> list[RenderableType]:
    """``renderables`` with each group's parts in its place (a group draws them one under
    another, as the console does a list)."""
    out: list[RenderableType] = []
    for r in renderables:
        out.extend(_flat(r.renderables) if isinstance(r, Group) else [r])
    return out


def _lines(r: RenderableType) -> int:
    if isinstance(r, Group):
        return sum(_lines(part) for part in r.renderables)
    if isinstance(r, Table):
        return 1 + r.row_count + (1 if r.caption else 0)
    if isinstance(r, Text):
        return r.plain.count("\n") + 1
    return 1


def _first_rows(table: Table, rows: int) -> Table:
    """A copy of ``table`` with its first ``rows`` rows (and no caption)."""
    cut = copy.copy(table)
    cut.columns = [dataclasses.replace(c, _cells=list(c.cells)[:rows]) for c in table.columns]
    cut.rows = table.rows[:rows]
    cut.caption = None
    return cut


def fit_width(renderables: Sequence[RenderableType]) -> int:
    """The narrowest width that shows every line unwrapped (between 60 and 400 columns)."""
    probe = Console(
        file=io.StringIO(), width=MAX_WIDTH, no_color=True, highlight=False, emoji=False
    )
    for r in renderables:
        probe.print(r)
    text = probe.file.getvalue()  # type: ignore[attr-defined]
    longest = max((len(line.rstrip()) for line in str(text).splitlines()), default=0)
    return max(MIN_WIDTH, min(MAX_WIDTH, longest))


def _recorded(renderables: Sequence[RenderableType], width: int | None) -> Console:
    console = Console(
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        color_system="truecolor",
        width=width or fit_width(renderables),
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )
    for r in renderables:
        console.print(r)
    return console


def report_svg(
    report: Report, options: RenderOptions | None = None, *, title: str = "shmem"
) -> str:
    """The report as an SVG image (a terminal window); the width defaults to the content's.

    ``options.color`` is ignored: a picture is always in color."""
    options = options or RenderOptions(heat=True)
    return renderables_svg(report_renderables(report, options), title=title, width=options.width)


def report_html(
    report: Report, options: RenderOptions | None = None, *, title: str = "shmem"
) -> str:
    """The report as a standalone HTML page with inline colors (see ``report_svg``)."""
    options = options or RenderOptions(heat=True)
    return renderables_html(report_renderables(report, options), title=title, width=options.width)


def renderables_svg(
    renderables: Sequence[RenderableType], *, title: str = "shmem", width: int | None = None
) -> str:
    """Any report's rich renderables as an SVG image (``shmem trace`` uses it too)."""
    console = _recorded(renderables, width)
    return console.export_svg(title=title, theme=THEME, code_format=_SVG_FORMAT)


def renderables_html(
    renderables: Sequence[RenderableType], *, title: str = "shmem", width: int | None = None
) -> str:
    """Any report's rich renderables as a standalone HTML page with inline colors."""
    console = _recorded(renderables, width)
    page = _HTML_FORMAT.format(title=html.escape(title).replace("{", "{{").replace("}", "}}"))
    return console.export_html(theme=THEME, code_format=page, inline_styles=True)
