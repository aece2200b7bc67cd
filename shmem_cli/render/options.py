"""How a report is drawn: one object for the text, SVG and HTML renderers alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from ..plumbing.frozen import frozen

#: bank-table rows shown by default (a wavefront each); ``rows=None`` shows every one
DEFAULT_ROWS = 16


@frozen
class RenderOptions:
    """The choices of ``shmem analyze`` that shape its report.

    ``width`` None: the renderer's default (200 columns of plain text, the
    content's width for pictures). ``hints``: file path -> access name -> the
    ``--suggest`` line shown under that access. ``rows``: the most bank-table
    rows (None: all).
    """

    color: bool = False
    #: details (bank table, heat map) of the accesses without conflicts too (trace --all)
    every: bool = False
    width: int | None = None
    words: bool = False
    tables: bool = True
    heat: bool = False
    rows: int | None = DEFAULT_ROWS
    hints: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: a line shown once at the end of the report (e.g. a hint shared by several accesses)
    notes: tuple[str, ...] = ()
    #: the lines of the files the report's errors name (the caller reads them, bounded:
    #: ``spec.source.error_sources``), for the source line quoted under an error
    sources: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
