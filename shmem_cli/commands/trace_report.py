"""``shmem trace``'s output: the progress line, the parameter listing and the report with its
pictures (the command's arguments and its run are in :mod:`.trace`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .common import emit_report, write_pictures
from .environment import Environment

if TYPE_CHECKING:
    from ..render.options import RenderOptions
    from ..trace.kernel.cubin import Kernel
    from ..trace.kernel.params import Param
    from ..trace.ncu.compare import KernelCompare
    from ..trace.result import TraceResult


@contextmanager
def progress_line(env: Environment, blocks: int) -> Iterator[Callable[[int, int], None] | None]:
    """A progress line on a terminal (standard error): block k of n, instructions so far."""
    if not env.stderr_isatty:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        console=Console(file=env.stderr),
        transient=True,
    ) as bar:
        task = bar.add_task("tracing", total=None)
        done = [0]

        def update(executed: int, block: int) -> None:
            done[0] = executed
            bar.update(
                task,
                description=f"tracing block {block + 1} of {blocks}: "
                f"{executed:,} thread-instructions",
            )

        yield update


def print_params(
    env: Environment, kernel: Kernel, rows: list[tuple[str, str, str, str, str]]
) -> None:
    from ..plumbing.errors import brief_name
    from ..render.plain import Column, Styled, Table, layout

    head = Styled(
        f"{kernel.name}  ({kernel.mangled})" if kernel.mangled != kernel.name else kernel.name
    )
    table = Table(
        [
            Column("position", "right"),
            Column("name"),
            Column("type"),
            Column("offset", "right"),
            Column("size", "right"),
        ]
    )
    for position, name, kind, offset, size in rows:  # a CuTe type runs to a thousand chars
        table.add_row(position, name, brief_name(kind), offset, size)
    tail = Styled(
        f"{len(rows)} parameter(s), {kernel.param_bytes} bytes at c[0x0][0x{kernel.param_base:x}]; "
        f"{kernel.static_shared_bytes:,} B static shared memory"
    )
    # a C++ template's name can be longer than any screen: lay out at its own width
    width = max(1000, len(head.plain), len(tail.plain))
    text = layout([head, table, tail], width)
    env.out(text if text is not None else f"{head.plain}\n{tail.plain}\n", nl=False)


def params_json(
    listed: Sequence[tuple[Kernel, Sequence[Param]]], entries: Sequence[str] = ()
) -> str:
    """``--list-params --format json``: per kernel its names, parameter block and parameters
    (what the text table shows, the type unshortened), for a script to build ``--params``;
    ``entries``: each kernel's Triton cache entry folder, where a cache root held several."""
    from ..plumbing import json_text
    from ..trace.kernel.params import unnamed_note

    folders = [{"entry": folder} for folder in entries] or [{} for _ in listed]
    kernels = [
        {
            **folder,
            "name": kernel.name,
            "mangled": kernel.mangled,
            "param_bytes": kernel.param_bytes,
            "param_base": kernel.param_base,
            "static_shared_bytes": kernel.static_shared_bytes,
            "unnamed_parameters": unnamed_note(params),  # why the names are missing
            "params": [
                {
                    "position": p.ordinal,
                    "name": p.name,
                    "type": p.type,
                    "offset": p.offset,
                    "size": p.size,
                }
                for p in params
            ],
        }
        for folder, (kernel, params) in zip(folders, listed, strict=True)
    ]
    return json_text.dumps({"schema_version": 1, "kernels": kernels}) + "\n"


def output(
    report: TraceResult,
    options: RenderOptions,
    *,
    fmt: str,
    output: str | None,
    every: bool,
    width: int | None,
    title: str,
    compares: list[KernelCompare] | None = None,
) -> bool:
    """The report on standard output (or --output), in any format of the report-format
    registry, and its pictures; whether the comparison with Nsight Compute (if any) agrees."""
    from ..trace.ncu.compare import ComparedTrace

    options = dataclasses.replace(options, every=every)
    shown = report if compares is None else ComparedTrace(report, tuple(compares))
    emit_report(shown, options, fmt=fmt, output=output, title=title)
    write_pictures(shown, dataclasses.replace(options, width=width), title=title)
    return not isinstance(shown, ComparedTrace) or shown.agrees
