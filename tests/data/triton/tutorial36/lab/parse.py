"""Turn run.sh's results (tri2.tar.gz, unpacked) into this folder's data, by the Triton labs'
parser (../../tutorial36b/lab/parse.py, which rowsum36, mma36 and ops36 use too), with the
same arguments.

Usage: parse.py RESULTS_DIR tests/data/triton/tutorial36. Keeps each cache entry's cubin,
metadata, TTGIR and group file (cache/), and writes launches.json (per launch: its entry, the
grid, the scalars a user passes: those Triton kept as parameters) and measured.json (per run
and launch: the per-op counters and, per shared-memory SASS instruction, the source counters).
The raw counter pages are kept gzipped in ncu/.
"""

import runpy
from pathlib import Path

PARSER = Path(__file__).resolve().parents[2] / "tutorial36b" / "lab" / "parse.py"
runpy.run_path(str(PARSER), run_name="__main__")
