"""What shmem predicts for launches of the DSMEM rule lab before the H200 counts them: each
launch traced (tests/hopper_lab.py, as tests/test_trace_dsmrule.py traces it), its crossbar
sectors (the remote instructions' ``dsmem_sectors``) per warp request, beside what another
reading of the rule would give (``per request``: a filled sector moves 1 where the request
writes any other remote sector, on whichever CTA), as a Markdown table.

Usage, from the repo root: PYTHONPATH=. python3 tests/data/trace/dsmrule/lab/predict.py FIRST
(FIRST: the first launch of the round, 92 for the fourth).
"""

import sys

from tests import hopper_lab as lab
from tests.test_trace_dsmrule import DATA, LAUNCHES, WIDTH, pattern, requests


def per_request(lid):
    """The other reading: per destination CTA and sector, 1 where its bytes lie in one half,
    or fill it while the request writes any other remote sector; else 2 (stores only)."""
    cluster = LAUNCHES[lid]["cluster"][0]
    width = WIDTH[LAUNCHES[lid]["kernel"]]
    by_sector = {}
    for off, hop in pattern(lid):
        if off >= 0 and hop % cluster:
            by_sector.setdefault((hop % cluster, off // 32), set()).update(range(off, off + width))
    if LAUNCHES[lid]["kernel"].startswith("ld"):
        return len(by_sector)
    total = 0
    for written in by_sector.values():
        halves = {b % 32 // 16 for b in written}
        full = len(written) == 32 and len(by_sector) > 1
        total += 1 if full or len(halves) == 1 else 2
    return total


def main():
    first = int(sys.argv[1])
    print("| launch | shmem: sectors a request (launch) | per request |")
    print("|---|---|---|")
    for lid in list(LAUNCHES)[first:]:
        kt, _ = lab.run(lid, DATA)
        got = sum(n.dsmem_sectors or 0 for n in kt.not_modelled if n.dsmem_sectors is not None)
        n = requests(lid)
        print(f"| `{lid}` | {got // n} ({got}) | {per_request(lid)} |")


if __name__ == "__main__":
    main()
