"""The ``shmem`` command group: the list of commands, nothing else.

Each command lives in its own module under :mod:`shmem_cli.commands` (argument
parsing, I/O and exit codes only) and is imported on first use, so that
``shmem --version`` stays fast. What the commands share (exit statuses, usage
errors, output options) is in :mod:`shmem_cli.commands.common`; the streams and
terminal are one :class:`~shmem_cli.commands.environment.Environment` object on
the click context.
"""

from __future__ import annotations

import os
from typing import Any

import click

from . import __version__
from .commands.common import CONTEXT, UsageError, help_written_safely
from .commands.environment import Environment, current_environment, say
from .plumbing.errors import TRACEBACK_VARIABLE

EXIT_INTERNAL = 2


def internal_error(exc: Exception) -> str:
    """The one line an unexpected exception is said in."""
    from .plumbing.errors import unexpected

    return f"shmem: {unexpected(exc)}"


# name -> "module:attribute" of commands loaded on first use (keeps start-up fast)
LAZY_COMMANDS: dict[str, str] = {
    "analyze": "shmem_cli.commands.analyze:analyze",
    "schema": "shmem_cli.commands.schema:schema",
    "examples": "shmem_cli.commands.examples:examples",
    "sweep": "shmem_cli.commands.sweep:sweep",
    "lint": "shmem_cli.commands.lint:lint",
    "rules": "shmem_cli.commands.lint:rules",
    "verify": "shmem_cli.commands.verify:verify",
    "trace": "shmem_cli.commands.trace:trace",
}


class ShmemGroup(click.Group):
    """The ``shmem`` group: subcommands imported only when invoked, one usage-error
    style for click's errors and ours, and the :class:`Environment` on the context."""

    def invoke(self, ctx: click.Context) -> Any:
        from .plumbing.interrupts import (
            guarded,  # exit statuses 130/143/2 on interrupts, bad output
        )

        ctx.ensure_object(Environment)
        try:
            with guarded():
                return super().invoke(ctx)
        except UsageError:
            raise
        except click.UsageError as exc:
            raise UsageError(exc.format_message(), exc.ctx) from None
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as exc:  # a bug shmem's checks missed: one line, never a traceback
            if os.environ.get(TRACEBACK_VARIABLE):
                raise
            say(internal_error(exc), None)
            ctx.exit(EXIT_INTERNAL)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        from .plumbing.interrupts import guarded  # --help, --version: their output can fail

        try:
            with guarded():
                return super().make_context(info_name, args, parent, **extra)
        except UsageError:
            raise
        except click.UsageError as exc:
            raise UsageError(exc.format_message(), exc.ctx) from None

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return help_written_safely(super().get_help_option(ctx))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._available()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self._available():
            return found
        import importlib

        module_name, attr = LAZY_COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    @staticmethod
    def _available() -> list[str]:
        import importlib.util

        return [
            name
            for name, target in LAZY_COMMANDS.items()
            if importlib.util.find_spec(target.split(":")[0]) is not None
        ]


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``, written as every output is (click's ``version_option`` raised on a full
    disk)."""
    if value and not ctx.resilient_parsing:
        current_environment().out(f"shmem, version {__version__}", color=ctx.color)
        ctx.exit()


@click.group(cls=ShmemGroup, context_settings=CONTEXT)
@click.option(
    "-V",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def main() -> None:
    """shmem: exact shared-memory bank-conflict analysis for CUDA kernels, without a GPU.

    Describe a kernel's shared-memory accesses in a YAML access spec (arrays with
    their element type, shape, padding and swizzle; accesses with their index
    expressions over threadIdx, loops and predicates: `shmem examples` lists the
    example specs that come with shmem, `shmem schema` prints the format). shmem
    computes every warp's byte addresses, the banks they hit and the wavefronts
    (passes of the shared-memory pipe) each warp instruction costs, with the
    rules measured on an NVIDIA H200. `shmem trace` answers the same from a
    compiled kernel (.cu, .cubin or executable): its SASS runs in an emulator,
    no GPU needed. The tutorial and the hardware model are in the docs folder
    of shmem's source repository.

    \b
    Examples:
      shmem examples --copy access_specs    # the specs and kernels used below, in ./access_specs/
      shmem examples
      shmem analyze access_specs/column_read_32x32.yaml
      shmem analyze access_specs/ --format json
      shmem sweep access_specs/transpose_naive.yaml --pad 0..4
      shmem lint access_specs/ --format sarif -o shmem.sarif
      shmem trace access_specs/kernels/transpose.cu -k transpose_naive --block 32,8 --arg n=32

    Every command exits with 0 on success, 1 when it found what it checks for
    (lint findings, verify mismatches, a trace --compare disagreement) and 2 on
    bad arguments or an invalid spec (every problem of it is reported at
    file:line:column).
    Run `shmem COMMAND --help` for a command's options.

    Shell completion (bash): eval "$(_SHMEM_COMPLETE=bash_source shmem)";
    zsh: eval "$(_SHMEM_COMPLETE=zsh_source shmem)";
    fish: _SHMEM_COMPLETE=fish_source shmem | source.
    """


if __name__ == "__main__":  # pragma: no cover
    main()
