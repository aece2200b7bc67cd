"""The trace budget's options, declared once for ``shmem trace`` and ``shmem sweep KERNEL.cu``.

``--max-instructions`` (per thread of a block), ``--max-launch-instructions`` and
``--time-limit`` raise (or lower) the budget of :mod:`shmem_cli.trace.emulator.budget`, and
``--compile-time-limit`` the wall time of each nvcc compile of a ``.cu``;
:func:`budget_of` turns the values given into a ``Budget``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..cuda.toolchain import COMPILE_SECONDS
from ..trace.emulator import budget as limits

if TYPE_CHECKING:
    from ..trace.emulator.budget import Budget

F = TypeVar("F", bound=Callable[..., Any])


def seconds_option(flag: str, text: str, default: float | None = None) -> Callable[[F], F]:
    """``flag SECONDS``: a wall-time limit, a finite number of seconds in the budget's range
    (a default given is shown in ``--help``)."""
    return click.option(
        flag,
        metavar="SECONDS",
        type=click.FloatRange(*limits.SECONDS_RANGE),
        callback=lambda _ctx, param, value: finite(param, value),
        default=default,
        show_default=default is not None,
        help=text,
    )


#: the option names, as the command function receives them
KEYS = ("max_instructions", "max_launch_instructions", "time_limit", "compile_time_limit")

OPTIONS = (
    click.option(
        "--max-instructions",
        metavar="N",
        type=click.IntRange(*limits.PER_THREAD_RANGE),
        default=None,
        help="The most instructions a block may execute per thread, on average, before the "
        "trace stops it as an endless loop [default: 524,288].",
    ),
    click.option(
        "--max-launch-instructions",
        metavar="N",
        type=click.IntRange(*limits.LAUNCH_RANGE),
        default=None,
        help="The most thread-instructions of the whole launch [default: 2^34].",
    ),
    seconds_option(
        "--time-limit",
        "The most wall time of the trace's run of the launch, and of one block run "
        f"alone, in seconds [default: {limits.SECONDS:g} for the launch, "
        f"{limits.ALONE_SECONDS:g} for a block alone].",
    ),
    seconds_option(
        "--compile-time-limit",
        "The most wall time of each nvcc compile of a .cu, in seconds "
        f"[default: {COMPILE_SECONDS:g}].",
    ),
)


def finite(param: click.Parameter, value: float | None) -> float | None:
    """NaN passes a range check (every comparison with it is false): refused here."""
    if value is not None and not math.isfinite(value):
        hint = f"'--{(param.name or '').replace('_', '-')}'"
        raise click.BadParameter("must be a number of seconds", param_hint=hint)
    return value


def budget_options(fn: F) -> F:
    """Declare the budget options on a command."""
    out: Any = fn
    for option in reversed(OPTIONS):
        out = option(out)
    return out  # type: ignore[no-any-return]


def budget_of(values: dict[str, Any]) -> Budget:
    """The budget the options in ``values`` (keyed as :data:`KEYS`) ask for."""
    from ..trace.emulator.budget import Budget

    return Budget.of(*(values.get(k) for k in KEYS))
