"""Write pairs9's inputs and launches.json (issue 30): new reads, drawn as pairs6 draws them
with another seed, to check the rules read off pairs3 to pairs8 on reads they were not read
from: Nsight's per-op counter (the pair rule) and its source counters (``pairs.source_extra``).
pairs5's predicated kernels (``../pairs5/kernels/pr.cu``, its cubin copied here). Run from
this folder: ``python3 make_launches.py``.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lab"))
from pair_reads import write  # noqa: E402 (the labs' shared writer)


def _pairs6():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("p6", HERE.parent / "pairs6" / "make_launches.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reads() -> dict[str, tuple[str, list[int]]]:
    p6 = _pairs6()
    rng = random.Random(9)
    out = {f"n64_{i:03d}": ("pr_ld64", p6.draw(rng, "pr_ld64")) for i in range(60)}
    out.update({f"n128_{i:03d}": ("pr_ld128", p6.draw(rng, "pr_ld128")) for i in range(100)})
    return out


def main() -> None:
    write(HERE, reads())


if __name__ == "__main__":
    main()
