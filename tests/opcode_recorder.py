"""A pytest plugin that records every base opcode the emulator executes in a session.

``python -m pytest -p tests.opcode_recorder ...`` with ``SHMEM_OPCODES_OUT=FILE`` writes the
opcodes, one a line, to FILE when the session ends (tests/test_trace_opcodes.py runs the
emulator's tests this way to show that every registered opcode ran on real SASS)."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from shmem_cli.trace.emulator import decode

_state: dict[str, Any] = {}


def pytest_sessionstart(session: Any) -> None:
    ctx: AbstractContextManager[set[str]] = decode.recording()
    _state["ctx"], _state["seen"] = ctx, ctx.__enter__()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    ctx = _state.pop("ctx", None)
    if ctx is None:
        return
    seen: set[str] = _state.pop("seen")
    ctx.__exit__(None, None, None)
    out = os.environ.get("SHMEM_OPCODES_OUT")
    if out:
        Path(out).write_text("".join(f"{op}\n" for op in sorted(seen)))
