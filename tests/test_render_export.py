"""SVG and HTML pictures of the report (shmem_cli/render/export.py, analyze --svg/--html)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from click.testing import CliRunner
from rich.color import Color

from shmem_cli.analysis.analyze import analyze_many
from shmem_cli.cli import main
from shmem_cli.render.export import THEME, fit_width, report_html, report_svg
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.text import report_renderables

from .conftest import ROOT

COLUMN = str(ROOT / "access_specs" / "column_read_32x32.yaml")


def svg_lines(svg: str) -> list[str]:
    """The text of an SVG made by rich, one string per terminal line, placed by x position."""
    cells: dict[int, dict[int, str]] = {}
    pattern = r'<text class="[\w-]+" x="([\d.]+)" y="[\d.]+" textLength="([\d.]+)" '
    pattern += r'clip-path="url\(#[\w-]+-line-(\d+)\)">([^<]*)</text>'
    for x, length, line, body in re.findall(pattern, svg):
        chars = html.unescape(body).replace("\xa0", " ").rstrip("\n")
        col = round(float(x) / (float(length) / len(chars))) if chars else 0
        for i, ch in enumerate(chars):
            cells.setdefault(int(line), {})[col + i] = ch
    return [
        "".join(row.get(i, " ") for i in range(max(row) + 1)) if row else ""
        for _, row in sorted(cells.items())
    ]


def test_svg_shows_banks_lanes_colors_and_legend() -> None:
    svg = report_svg(analyze_many([COLUMN]), title="shmem analyze column")
    assert svg.startswith("<svg")
    assert 'xml:space="preserve"' in svg
    assert 'url("http' not in svg  # a standalone picture fetches no fonts
    assert "shmem&#160;analyze&#160;column" in svg  # the window title
    text = "\n".join(svg_lines(svg))
    # the 32 bank numbers head the tables, wavefront 31 serves lane 31 in bank 0
    assert "wf 0  1  2  3" in text and "28 29 30 31" in text
    assert "32-way" in text
    assert "cells: lanes served" in text
    # conflict colors: the 32-way cells in bold magenta (>8 per bank), the row store in green
    magenta, green = (THEME.ansi_colors[i].hex for i in (5, 2))
    assert f"fill: {magenta};font-weight: bold" in svg
    assert re.search(rf"fill: {green} \}}", svg)


def test_svg_heat_map_cells_are_colored_blocks() -> None:
    svg = report_svg(analyze_many([str(ROOT / "access_specs" / "reduction_interleaved.yaml")]))
    text = "\n".join(svg_lines(svg))
    assert "s \\ warp  0  1  2  3  4  5  6  7" in text
    # 2x, 3-4x and 5-8x requests are drawn on yellow, orange and red backgrounds
    for color in ("yellow", "dark_orange", "red"):
        hex_color = Color.parse(color).get_truecolor(THEME).hex
        assert f'<rect fill="{hex_color}"' in svg, color


def test_svg_width_fits_the_longest_line() -> None:
    report = analyze_many([COLUMN])
    width = fit_width(report_renderables(report, RenderOptions(heat=True)))
    # the legend is the longest line of this report
    legend = "cells: lanes served (a-b range, a,b pair, a+n: lane a and n more); color: "
    assert width > len(legend)
    text = svg_lines(report_svg(report))
    assert max(len(line.rstrip()) for line in text) == width


def test_html_is_a_standalone_page() -> None:
    page = report_html(analyze_many([COLUMN]), title="shmem <analyze>")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>shmem &lt;analyze&gt;</title>" in page
    assert "<style" in page and "http" not in page
    body = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "column read tile[tx][ty]" in body
    assert "wf 0  1  2  3" in body
    assert 'style="color: #' in page  # inline colors


def test_cli_writes_pictures_and_keeps_the_terminal_output(tmp_path: Path) -> None:
    runner = CliRunner()
    plain = runner.invoke(main, ["analyze", COLUMN])
    svg, page = tmp_path / "out" / "c.svg", tmp_path / "c.html"
    svg.parent.mkdir()  # shmem does not create folders for output files
    both = runner.invoke(main, ["analyze", COLUMN, "--svg", str(svg), "--html", str(page)])
    assert both.exit_code == 0, both.output
    assert both.output == plain.output
    assert svg.read_text().startswith("<svg")
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert "column_read_32x32.yaml" in svg.read_text()  # the title names the command
