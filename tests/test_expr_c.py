"""Index expressions mean what they mean in CUDA: shmem against g++ (issue 13).

The quick run compares a few hundred random expressions; the slow one (marked
``slow``, still run by CI) a few thousand; ``make fuzz`` runs more.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cexpr import compare
from .conftest import needs_gxx


@pytest.mark.slow
@needs_gxx
def test_random_expressions_equal_compiled_cpp(tmp_path: Path) -> None:
    checked = compare(300, seed=13, folder=tmp_path)
    assert checked.compared > 1000  # 300 expressions x 6 environments, less the refused
    assert checked.refused > 0  # undefined cases are among them, refused


@needs_gxx
@pytest.mark.slow
def test_thousands_of_random_expressions_equal_compiled_cpp(tmp_path: Path) -> None:
    checked = compare(3000, seed=2026, folder=tmp_path)
    assert checked.compared > 10000
