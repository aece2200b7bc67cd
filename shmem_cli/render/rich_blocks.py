"""The report's blocks (:mod:`shmem_cli.render.plain`) as rich renderables, for a terminal in
color, for SVG and HTML, and for plain text that needs wrapping. rich is imported only here,
inside the functions: the plain path never pays for it.

A table wider than the terminal is folded, never cut: a value (a count, ``100.0%``) folds onto
more lines where it does not fit, a header is cut (``wavefr…``), and a column marked ``keep``
(a verdict, a source line) keeps its whole width.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .plain import Block, Cell, Styled

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text


def rich_text(styled: Styled | str) -> Text:
    """A styled piece of text as a rich Text (never read as markup)."""
    from rich.text import Text

    if isinstance(styled, str):
        return Text(styled)
    text = Text(style=styled.base)
    for part, style in styled.spans:
        text.append(part, style=style or None)
    return text


def _widest(cells: Iterable[Cell]) -> int:
    """The longest line of the cells."""
    return max(
        (len(line) for c in cells for line in (c if isinstance(c, str) else c.plain).split("\n")),
        default=0,
    )


def to_rich(block: Block) -> RenderableType:
    """One block as the rich renderable that draws it."""
    if isinstance(block, Styled):
        return rich_text(block)
    from rich.table import Table as RichTable

    table = RichTable(
        box=None,
        pad_edge=False,
        show_edge=False,
        header_style="bold",
        padding=(0, block.pad_right, 0, block.pad_left),
    )
    for k, column in enumerate(block.columns):
        least = column.min_width
        if column.keep:  # a verdict, a source line: never cut
            least = max(least, _widest(row[k] for row in block.rows))
        header = rich_text(column.header)
        header.overflow = "ellipsis"  # a header is cut ("wavefr…"), a value folds
        table.add_column(
            header,
            justify=column.justify,
            style=column.style or None,
            min_width=least or None,
            no_wrap=column.keep,
            overflow="fold",  # too narrow a terminal folds a value onto more lines, never cuts it
        )
    for row in block.rows:
        table.add_row(*(rich_text(cell) for cell in row))
    if block.caption:
        table.caption = block.caption  # our own words: rich gives it the caption style
    return table
