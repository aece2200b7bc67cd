"""``--fuzz-seconds``: how long each fuzz target runs (``make fuzz`` passes 60).

Plain ``pytest`` (``make test``) runs every target for one second only.
"""

from __future__ import annotations

import pytest

from .harness import ITERATIONS

DEFAULT_SECONDS = 1.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-seconds",
        type=float,
        default=None,
        help=f"seconds each fuzz target runs (default {DEFAULT_SECONDS})",
    )


@pytest.fixture
def fuzz_seconds(request: pytest.FixtureRequest) -> float:
    value = request.config.getoption("--fuzz-seconds", default=None)
    return DEFAULT_SECONDS if value is None else float(value)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if ITERATIONS:
        terminalreporter.write_sep("-", "fuzz inputs tried")
        for name, count in sorted(ITERATIONS.items()):
            terminalreporter.write_line(f"{name}: {count}")
