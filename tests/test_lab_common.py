"""The labs' shared page reader (tests/data/lab_common/ncu_pages.py) and the lab scripts that
use it: it reads a kept raw page of Nsight Compute into the counters the project measured
with another parser, and every lab script that uses it still runs with python3's standard
library (the labs run on the H200 by hand)."""

from __future__ import annotations

import ast
import gzip
import json
import re
from pathlib import Path
from types import ModuleType

from .conftest import TEST_DATA, TRACE_DATA, module_from_file

COMMON = TEST_DATA / "lab_common"
# the lab scripts that read their pages through ncu_pages
LABS = ("miscops", "dsmrule", "cluster", "probes2")
PARSERS = [TRACE_DATA / lab / "lab" / "parse_ncu.py" for lab in LABS]
PARSERS.append(TRACE_DATA / "hopper" / "lab" / "parse_ncu.py")
# what a lab script may import: python3's standard library, numpy, the shared module
ALLOWED = {"csv", "json", "os", "re", "shutil", "sys", "pathlib", "numpy", "ncu_pages"}


def _module() -> ModuleType:
    return module_from_file("ncu_pages", COMMON / "ncu_pages.py")


def test_a_kept_raw_page_gives_the_measured_per_op_counts(tmp_path: Path) -> None:
    # tests/data/trace/semantics: its raw page, and measured.json written from it by
    # tests/data/trace/lab/parse_ncu.py (a parser of its own)
    pages = _module()
    data = TRACE_DATA / "semantics"
    raw = tmp_path / "raw.csv"
    raw.write_bytes(gzip.decompress((data / "ncu" / "raw.csv.gz").read_bytes()))
    head, rows = pages.raw_rows(raw)
    launches = json.loads((data / "launches.json").read_text())["launches"]
    measured = {e["id"]: e for e in json.loads((data / "measured.json").read_text())["launches"]}
    assert len(rows) == len(launches) == 142
    for launch, row in zip(launches, rows, strict=True):
        assert launch["kernel"] in row[head.index("Kernel Name")]
        got = pages.counters(head, row, re.compile("shared"))  # those that counted anything
        for op, want in measured[launch["id"]]["per_op"].items():
            if "wavefronts" not in want:
                continue
            assert (
                got.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}", 0)
                == (want["wavefronts"])
            ), (launch["id"], op)
            assert got.get(f"smsp__sass_inst_executed_op_shared_{op}", 0) == want["requests"]


def test_cells_that_hold_no_count_are_none() -> None:
    num = _module().num
    assert [num(x) for x in ("1,024", "3.0", "0", "n/a", "-", "")] == [1024, 3, 0, None, None, None]


def test_every_lab_script_using_it_imports_only_the_standard_library() -> None:
    for script in [*PARSERS, COMMON / "ncu_pages.py"]:
        tree = ast.parse(script.read_text())
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names.add((node.module or "").split(".")[0])
        assert names <= ALLOWED, (script, names - ALLOWED)
        if script in PARSERS:  # it finds the shared module from where it lies
            assert '"lab_common"' in script.read_text() and "parents[3]" in script.read_text()
            assert (script.resolve().parents[3] / "lab_common" / "ncu_pages.py").is_file()


def test_the_triton_labs_run_the_shared_launcher_from_their_own_folder() -> None:
    steps = (COMMON / "tri_lab.sh").read_text()
    assert "python3 - " in steps and "< ../../../lab_common/tri_run.py" in steps
    for lab in ("tutorial36", "tutorial36b", "rowsum36", "mma36", "ops36", "jit36"):
        folder = TEST_DATA / "triton" / lab / "lab"
        run = (folder / "run.sh").read_text()
        assert '. "$H/../../../lab_common/tri_lab.sh"' in run and 'cd "$H"' in run
        assert (folder / "../../../lab_common/tri_lab.sh").resolve().is_file()
        assert (folder / "../../../lab_common/tri_run.py").resolve().is_file()
        assert {"launches.py"} <= {p.name for p in folder.iterdir()}
        assert not (folder / "tri_run.py").exists()  # one launcher, not a copy a lab
