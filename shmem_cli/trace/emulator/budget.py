"""How much one trace may run: executed instructions per block and per launch, wall time,
and the memory its shared-memory records take.

A kernel that never ends (a loop on data the trace does not have, a spin on a flag no
other block sets) must not run the trace without end, and one such kernel in ``shmem lint``
must not keep the others' results from coming. The defaults fit launches users really run
(a 4096 x 4096 transpose, 16,384 blocks of 256 threads and 319 million thread-instructions,
takes about a minute) and stop an endless loop of any block within seconds:

* a block may execute :data:`PER_THREAD` instructions per thread on average (131,072: a
  GEMM block's main loop over K = 8,192 is well within); ``--max-instructions``;
* a launch may execute :data:`LAUNCH_INSTRUCTIONS` thread-instructions in all
  (2^34); ``--max-launch-instructions``;
* a launch may run :data:`SECONDS` of wall time (180: three times the transpose);
  ``--time-limit``;
* the requests recorded for the report may take :data:`MAX_RECORDED_BYTES` (384 MiB), the copy
  an array makes as it grows included (checked before each growth: ``distinct_rows.Allowance``).

Past a budget the trace stops with an error placed at the loop it was in: the
instructions the block executed most, by source line and SASS offset, and the option
(or the Python API's argument) that raises it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...cuda.sass import Instruction
from ...plumbing.errors import SourcePos
from .trace_error import TraceError

PER_THREAD = 1 << 17
LAUNCH_INSTRUCTIONS = 1 << 34
SECONDS = 180.0
MAX_RECORDED_BYTES = 384 << 20
CHECK_EVERY = 256  # steps between looks at the clock and at the records


@dataclass(frozen=True)
class Budget:
    """The budgets of one trace (None: the default)."""

    per_thread: int = PER_THREAD  # instructions per thread of a block, on average
    launch_instructions: int = LAUNCH_INSTRUCTIONS  # thread-instructions of the launch
    seconds: float = SECONDS  # wall time of the launch
    recorded_bytes: int = MAX_RECORDED_BYTES

    def block_instructions(self, threads: int) -> int:
        """Thread-instructions one block of ``threads`` threads may execute."""
        return self.per_thread * threads

    @classmethod
    def of(
        cls,
        max_instructions: int | None = None,
        max_launch_instructions: int | None = None,
        time_limit: float | None = None,
    ) -> Budget:
        """The defaults, with the options a user gave."""
        return cls(
            per_thread=PER_THREAD if max_instructions is None else max_instructions,
            launch_instructions=(
                LAUNCH_INSTRUCTIONS if max_launch_instructions is None else max_launch_instructions
            ),
            seconds=SECONDS if time_limit is None else time_limit,
        )


DEFAULT = Budget()


def hot_loop(instructions: Sequence[Instruction], hits: Sequence[int]) -> tuple[Instruction, str]:
    """The loop a block was in: the instruction to place the error at and ``hello.cu:8-10
    (pc 0x00c0-0x0170)`` (SASS offsets), from the instructions executed at least half as
    often as the most executed one."""
    top = max(hits)
    hot = [k for k, n in enumerate(hits) if n and 2 * n >= top]
    first, last = instructions[hot[0]], instructions[hot[-1]]
    placed = next((instructions[k] for k in hot if instructions[k].line), first)
    lines = sorted({instructions[k].line or 0 for k in hot if instructions[k].file == placed.file})
    lines = [n for n in lines if n]
    where = ""
    if placed.file and lines:
        span = f"{lines[0]}" if lines[0] == lines[-1] else f"{lines[0]}-{lines[-1]}"
        where = f"{placed.file.rsplit('/', 1)[-1]}:{span} "
    pcs = f"0x{first.pc:04x}" if first.pc == last.pc else f"0x{first.pc:04x}-0x{last.pc:04x}"
    return placed, f"{where}(pc {pcs})"


def stop(
    why: str,
    instructions: Sequence[Instruction],
    hits: Sequence[int],
    raise_with: str,
) -> TraceError:
    """The error for a budget that ran out (``why``), placed at the loop the block was in."""
    at, loop = hot_loop(instructions, hits)
    error = TraceError(
        f"{why}, looping in {loop}: an endless loop? If the kernel really runs that long, "
        f"raise {raise_with}"
    )
    if at.file and at.line:
        error.path, error.pos = at.file, SourcePos(at.line, 1)
    return error


def block_name(idx: tuple[int, int, int]) -> str:
    return f"block ({idx[0]},{idx[1]},{idx[2]})"
