"""The text report's building blocks, and their layout as plain text without rich.

:mod:`shmem_cli.render.text` describes a report once, as a list of blocks:
:class:`Styled` lines and borderless :class:`Table` s, each piece of text with the
name of a rich style (``"bold"``, ``"red"``, ``"black on yellow"``). On a
terminal, and for ``--svg``/``--html``, the blocks become rich renderables and
rich draws them in color. For plain output (a pipe, a file, ``NO_COLOR``,
``--no-color``) :func:`layout` lays them out here, character for character as
rich does with color off, so that ``shmem analyze`` does not import rich at all
(its import costs more than the analysis of a small spec).

:func:`layout` only takes the cases where nothing needs wrapping: every line and
every table within the width, every character printable ASCII. For anything
else (a table rich would narrow, a line it would wrap, a character whose width
on screen is not one column) it returns None and the caller asks rich.
tests/test_render_plain.py checks the two against each other on every example.

Kept free of imports (dataclasses included): it is on the start-up path.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias

Justify: TypeAlias = Literal["left", "center", "right"]

# control characters (C0 but the newline, DEL, C1) that user text (a name, a path, an
# error quoting a spec) could carry into a terminal: shown as escapes, never sent raw
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c != 0x0A}
# and the marks and overrides of bidirectional text, which reorder what a terminal or a CI log
# shows of the rest of the line (a spec named "\u202eevil" read "live"; "Trojan Source")
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS.update({c: f"\\u{c:04x}" for c in _BIDI})


def visible(text: str) -> str:
    """``text`` with its control characters written as ``\\xNN`` (a newline stays), and the
    controls of bidirectional text as ``\\u202e``."""
    return text.translate(_CONTROLS)


class Styled:
    """A piece of text (one line, or several separated by ``\\n``) in styled spans.

    Control characters in the text are shown as escapes (:func:`visible`).
    ``Styled("ok", "bold green")`` gives the whole text a *base* style, which in
    a table cell also colors the blanks the cell is padded with (a heat-map cell
    on a yellow background stays yellow across its width); :meth:`append` adds
    a span whose style covers just its characters. Plain output drops styles.
    """

    __slots__ = ("base", "spans")

    def __init__(self, text: str = "", style: str = "") -> None:
        self.base = style
        self.spans: list[tuple[str, str]] = [(visible(text), "")] if text else []

    def append(self, text: str, style: str = "") -> Styled:
        self.spans.append((visible(text), style))
        return self

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.spans)


Cell: TypeAlias = "str | Styled"


class Column:
    """A table column: its header, how its cells are justified, its narrowest width."""

    __slots__ = ("header", "justify", "min_width", "style", "keep")

    def __init__(
        self,
        header: str,
        justify: Justify = "left",
        *,
        min_width: int = 0,
        style: str = "",
        keep: bool = False,
    ) -> None:
        self.header = header
        self.justify: Justify = justify
        self.min_width = min_width
        self.style = style  # of every cell below the header
        # never cut on a narrow terminal (rich): a verdict, a source line; numbers (right-
        # justified) never are either, other text columns wrap first
        self.keep = keep


class Table:
    """Columns without borders: a bold header row, then the rows.

    A column is as wide as its widest cell (at least ``min_width``); columns are
    separated by ``pad_right`` blanks after a cell and ``pad_left`` before the
    next, none at the table's outer edges. An optional caption is centered
    under the table. (rich: ``Table(box=None, pad_edge=False, show_edge=False,
    header_style="bold", padding=(0, pad_right, 0, pad_left))``.)
    """

    __slots__ = ("columns", "rows", "pad_left", "pad_right", "caption")

    def __init__(self, columns: Sequence[Column], *, pad_left: int = 1, pad_right: int = 1) -> None:
        self.columns = list(columns)
        self.rows: list[list[Cell]] = []
        self.pad_left = pad_left
        self.pad_right = pad_right
        self.caption = ""

    def add_row(self, *cells: Cell) -> None:
        assert len(cells) == len(self.columns)
        self.rows.append(list(cells))


Block: TypeAlias = "Styled | Table"


#: the most lines of a report drawn through rich (colored text, the SVG and HTML pictures):
#: rich takes 1.5 to 4 ms a line of a report's tables (its heat maps most), ten times the
#: plain layout, so a trace of 3,000 distinct shared-memory instructions (18,000 lines) took
#: 64 s to draw as SVG where its text took 5.5 s, and a launch may record 32,768 of them.
#: Past it colored text is plain and a picture stops (:func:`shmem_cli.render.export.drawn`)
MAX_DRAWN_LINES = 4_000


def lines_of(blocks: Iterable[Block]) -> int:
    """The lines ``blocks`` take (a table: its header, rows and caption), unwrapped."""
    total = 0
    for block in blocks:
        if isinstance(block, Table):
            total += 1 + len(block.rows) + (1 if block.caption else 0)
        else:
            total += block.plain.count("\n") + 1
    return total


def table_width(table: Table) -> int:
    """The columns ``table`` needs to show every cell unwrapped (its caption aside)."""
    columns = table.columns
    last = len(columns) - 1
    total = 0
    for i, column in enumerate(columns):
        pad = (0 if i == 0 else table.pad_left) + (0 if i == last else table.pad_right)
        texts = [column.header, *(row[i] for row in table.rows)]
        widest = max(
            (
                len(line)
                for t in texts
                for line in (t if isinstance(t, str) else t.plain).split("\n")
            ),
            default=0,
        )
        total += max(widest, column.min_width) + pad
    return total


def layout(blocks: Iterable[Block], width: int, *, ascii_only: bool = True) -> str | None:
    """The blocks as plain text, one after the other, in ``width`` columns; None when
    some block would need wrapping or holds a character other than printable ASCII (with
    ``ascii_only`` False, any printable one: a wide character then shifts its row's columns,
    as a report too long for rich is laid out)."""
    out: list[str] = []
    for block in blocks:
        lines = (
            _table(block, width, ascii_only)
            if isinstance(block, Table)
            else _lines(block.plain, width, ascii_only)
        )
        if lines is None:
            return None
        out.extend(lines)
    return "".join(line.rstrip() + "\n" for line in out)


def _lines(text: str, width: int, ascii_only: bool = True) -> list[str] | None:
    """The lines of ``text`` if each is printable (ASCII) and at most ``width`` long."""
    lines = text.split("\n")
    for line in lines:
        if len(line) > width or not ((line.isascii() or not ascii_only) and line.isprintable()):
            return None
    return lines


def _justify(line: str, width: int, justify: Justify) -> str:
    if justify == "left":
        return line.ljust(width)
    line = line.rstrip()
    if justify == "right":
        return line.rjust(width)
    return (" " * ((width - len(line)) // 2) + line).ljust(width)


def _table(table: Table, width: int, ascii_only: bool = True) -> list[str] | None:
    columns = table.columns
    last = len(columns) - 1
    pads = [
        (0 if i == 0 else table.pad_left, 0 if i == last else table.pad_right)
        for i in range(len(columns))
    ]
    header: list[Cell] = [c.header for c in columns]
    grid: list[list[list[str]]] = []  # row (the header first), column, line
    for row in [header, *table.rows]:
        cells: list[list[str]] = []
        for cell in row:
            text = cell if isinstance(cell, str) else cell.plain
            lines = _lines(text, width, ascii_only)
            if lines is None or text.endswith("\n"):
                return None
            cells.append(lines)
        grid.append(cells)
    # each column as wide as its widest line (at least min_width), plus its padding
    widths: list[int] = []
    for i, column in enumerate(columns):
        pad = sum(pads[i])
        widest = max(len(line) for cells in grid for line in cells[i]) + pad
        widths.append(max(widest, column.min_width + pad) or 1)
    total = sum(widths)
    if total > width:
        return None  # rich would narrow the columns and wrap their cells
    out: list[str] = []
    for r, cells in enumerate(grid):
        height = max(len(lines) for lines in cells)
        shaped: list[list[str]] = []
        for i, lines in enumerate(cells):
            left, right = pads[i]
            inner = widths[i] - left - right
            body = [
                " " * left + _justify(line, inner, columns[i].justify) + " " * right
                for line in lines
            ]
            blank = [" " * widths[i]] * (height - len(body))
            shaped.append(blank + body if r == 0 else body + blank)  # the header sits at the bottom
        out.extend("".join(cell[k] for cell in shaped) for k in range(height))
    if table.caption:
        caption = _lines(table.caption, total, ascii_only)
        if caption is None:
            return None
        out.extend(_justify(line, total, "center") for line in caption)
    return out
