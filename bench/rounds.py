"""``shmem trace ...`` with each round of watched blocks timed (process CPU) and the same
blocks run again plainly after it (a silent batch: they count nothing), so that a round's
cost per thread-instruction can be set against running its blocks plainly and against a
plain batch (bench/watch.py's small rounds): ``bench/rounds.py OUT trace ...`` writes the
rounds as JSON to OUT. The first round's blocks run plainly once before it, untimed: the
process's first steps pay costs once that any trace pays wherever they fall (NumPy's lazy
imports, the MUFU tables), which would otherwise be counted to the first round. Not a
user-facing option.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shmem_cli.trace.emulator.alike import classes  # noqa: E402

_play = classes._Rounds.play
_pick = classes._Rounds._pick
ROUNDS: list[dict[str, Any]] = []


def _picked(rounds: Any) -> list[int]:
    reps: list[int] = _pick(rounds)
    rounds.bench_reps = reps
    return reps


def _plainly(rounds: Any, reps: list[int]) -> float:
    """CPU seconds of the blocks ``reps`` run plainly (silent: they count nothing)."""
    run = rounds.run
    waits, run.waits = run.waits, None  # (blocks that ran already: run them again)
    cpu = time.process_time()
    run.batch(rounds.plan.only(reps), None, silent=True)
    run.waits = waits
    return time.process_time() - cpu


def _timed(rounds: Any) -> bool:
    run = rounds.run
    if not ROUNDS:  # (the first round: its blocks are the lowest in no class)
        _plainly(rounds, [int(b) for b in np.flatnonzero(rounds.left)[: rounds.together]])
    cpu, executed = time.process_time(), run.executed
    more: bool = _play(rounds)
    watched, executed = time.process_time() - cpu, run.executed - executed
    plain = _plainly(rounds, rounds.bench_reps)
    blocks = len(rounds.bench_reps)
    ROUNDS.append({"blocks": blocks, "executed": executed, "watched_s": watched, "plain_s": plain})
    return more


classes._Rounds._pick = _picked  # type: ignore[method-assign]
classes._Rounds.play = _timed  # type: ignore[method-assign]

if __name__ == "__main__":
    from shmem_cli.cli import main

    out, sys.argv = Path(sys.argv[1]), [sys.argv[0], *sys.argv[2:]]
    try:
        main()
    finally:
        out.write_text(json.dumps(ROUNDS) + "\n")
