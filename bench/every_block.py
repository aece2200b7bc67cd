"""``shmem trace ...`` with every block of the grid run in plain batches, none watched: the
tracer's own path for a caller that reads what every block wrote (``every_block``). The
baseline of bench/watch.py's figure; not a user-facing option."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shmem_cli.trace.emulator import execute  # noqa: E402

_run = execute.run


def _every_block(*args: Any, **kw: Any) -> Any:
    kw["every_block"] = True
    return _run(*args, **kw)


execute.run = _every_block  # (the tracer imports it when it traces)

if __name__ == "__main__":
    from shmem_cli.cli import main

    main()
