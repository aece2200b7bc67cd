"""Write pairs8's inputs and launches.json (issue 30): does what the array holds, or where it
lives, decide whether a read with a conflict merges its pair phases?

pairs7 showed that the lanes and addresses of ``r2_001_double_ld`` (which merges with a
conflict in the hardware-truth lab: 4 wavefronts) cost the unmerged 8 in the project's own
kernels, predicated or not. The kernels differ in what the array holds (the lab's are never
written: they hold what earlier kernels left, or zeros; the project's hold element k = k)
and where it lives (the lab's in dynamic shared memory). These reads repeat pairs5's, pairs6's
chosen ones and the first of its random ones with four kernels (``kernels/prd.cu``): every
element 0 (``prz``), element k = k % 2 (``prv``), dynamic shared memory with k = k
(``prd``), nothing written (``prn``). Run from this folder: ``python3 make_launches.py``.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDTH = {"pr_ld64": "64", "pr_ld128": "128"}
FORMS = ("prz", "prv", "prd", "prn")


def _module(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, HERE.parent / name / "make_launches.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reads() -> dict[str, tuple[str, list[int]]]:
    out = {f"5_{k}": v for k, v in _module("pairs5").reads().items()}
    six = _module("pairs6").reads()
    for name, read in six.items():
        if (
            name.startswith("m_")
            or name < "r64_060"
            and name.startswith("r64")
            or (name.startswith("r128") and name < "r128_030")
        ):
            out[f"6_{name}"] = read
    return out


def main() -> None:
    launches = []
    for name, (kernel, idx) in reads().items():
        (HERE / "inputs" / f"{name}.bin").write_bytes(struct.pack("<32i", *idx))
        for form in FORMS:
            k = f"{form}_br{WIDTH[kernel]}"
            launches.append(
                {
                    "id": f"{form}_{name}",
                    "source": "kernels/prd.cu",
                    "cubin": "prd.sm_90.cubin",
                    "kernel": k,
                    "block": [32, 1, 1],
                    "grid": [1, 1, 1],
                    "dynamic_smem": 2048 if form == "prd" else 0,
                    "args": [{"zeros": 1024}, {"file": f"inputs/{name}.bin"}],
                    "mangled": k,
                }
            )
    (HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")


if __name__ == "__main__":
    main()
