"""The launches lab/run.sh measures on the GPU, in lab_common/tri_run.py's format
(id: kernel, constexprs, options, grid, scalars, tensors {name: (dtype, shape)}).

From launches.py, every launch whose trace (results_after.tsv; EXTRA) touches shared memory, less
those that cannot be measured one launch at a time in a short run: programs spinning on
each other (grid_barrier, lookback_scan, the CAS spin lock), num_ctas=2 (a cluster launch),
and host-side TensorDescriptor arguments (tri_run.py passes tensors only). Every pointer is a
zero-filled tensor of 1 MiB, the buffer the trace gives each pointer."""

import importlib.util
import json
from pathlib import Path

# launches.py of this folder by its path: parse.py runs from another lab's folder, whose own
# launches.py comes first on the import path
_SPEC = importlib.util.spec_from_file_location(
    "ops36_launches", Path(__file__).with_name("launches.py")
)
assert _SPEC and _SPEC.loader
_MODULE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_MODULE)
L = _MODULE.L

#: traced after results_after.tsv was written (cache/'s dot_k: ld 80 and st 48 requests traced)
EXTRA = {"dot_f64_w1_32"}
SKIP = {"grid_barrier", "lookback_scan", "lock", "cluster2", "cluster2_mm"}
BYTES = 1 << 20
SIZE = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2}
SIZE["int16"] = 2


def _touches_shared(row: str) -> bool:
    ops = json.loads(row.split(" nm=")[0])
    return any(op != "misc" and counts[0] for op, counts in ops.items())


_TRACED = {}
for _line in (Path(__file__).parent / "results_after.tsv").read_text().splitlines():
    _ident, _status, _secs, _row = _line.split("\t")
    if _status == "ok":
        _TRACED[_ident] = _touches_shared(_row)

LAUNCHES = {}
for _ident, (_name, _consts, _opts, _grid, _scalars, _tensors) in L.items():
    if _ident in SKIP or not (_TRACED.get(_ident) or _ident in EXTRA) or "num_ctas" in _opts:
        continue
    if any(isinstance(t, tuple) for t in _tensors.values()):
        continue
    LAUNCHES[_ident] = (
        _name,
        _consts,
        _opts,
        _grid,
        _scalars,
        {p: (dt, (BYTES // SIZE.get(dt, 1),)) for p, dt in _tensors.items()},
    )
