"""IEEE 754's roundings of the lab's inputs, worked out exactly (Python's fractions), beside
shmem's predictions (predicted/) and, once measured, the GPU's results (outputs/): how many
results each gives otherwise, per rounding.

Neither is measured: they are two readings to set against what the GPU writes. NaN inputs
are left out (IEEE does not fix a NaN's bits). Each value is rounded once, from the source
itself: to nearest with ties to even, toward zero, toward -inf, toward +inf; the format's
subnormals kept; past the largest finite, infinity where the rounding goes away from zero
(RN, RP for a positive value, RM for a negative one), else the largest finite.

Usage: python3 reference.py (numpy; from this folder or anywhere).
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODES = ("rn", "rz", "rm", "rp")
# mantissa bits, the smallest normal's exponent, the largest exponent
FORMATS = {"f16": (10, -14, 15), "bf16": (7, -126, 127)}


def rounded(x, fmt, mode):
    """The finite or infinite value the rounding gives (a float), x a finite float."""
    m, emin, emax = FORMATS[fmt]
    if x == 0:
        return x
    a = Fraction(abs(x))
    e = min(max(math.floor(math.log2(a)), emin), emax)
    while Fraction(2) ** (e + 1) <= a and e < emax:  # log2's float error
        e += 1
    while Fraction(2) ** e > a and e > emin:
        e -= 1
    q = a / Fraction(2) ** (e - m)  # the magnitude in ulps
    low = math.floor(q)
    away = mode == "rp" and x > 0 or mode == "rm" and x < 0
    if mode == "rn":
        n = low + (q - low > Fraction(1, 2) or (q - low == Fraction(1, 2) and low % 2 == 1))
    elif away:
        n = math.ceil(q)
    else:
        n = low
    top = (2 ** (m + 1) - 1) * Fraction(2) ** (emax - m)
    r = n * Fraction(2) ** (e - m)
    if r > top:
        r = math.inf if mode == "rn" or away else top
    return math.copysign(float(r), x)


def bits(v, fmt):
    if fmt == "f16":
        return int(np.array(v, np.float16).view(np.uint16))
    return int(np.array(v, np.float32).view(np.uint32)) >> 16  # exact: a bf16 value


def reference(values):
    """{(fmt, mode): [bits or None for a NaN]}"""
    out = {}
    for fmt in FORMATS:
        for mode in MODES:
            out[fmt, mode] = [
                None if math.isnan(x) else bits(x if math.isinf(x) else rounded(x, fmt, mode), fmt)
                for x in values
            ]
    return out


def differs(ref, got):
    """Per rounding, how many numbers' results ``got`` (8 columns) has other than ``ref``."""
    row = {}
    for k, (fmt, mode) in enumerate((f, m) for f in FORMATS for m in MODES):
        r = ref[fmt, mode]
        row[f"{mode}.{fmt}"] = sum(1 for i, b in enumerate(r) if b is not None and b != got[i, k])
    return row


def main():
    launches = json.loads((HERE / "launches.json").read_text())["launches"]
    report = {}
    for L in launches:
        dtype = np.float64 if L["kernel"] == "cvt_f64" else np.float32
        values = [float(x) for x in np.fromfile(HERE / L["args"][1]["file"], dtype)]
        ref = reference(values)
        report[L["id"]] = {"numbers": sum(1 for x in values if not math.isnan(x))}
        for folder in ("predicted", "outputs"):  # shmem's prediction; the GPU's, once measured
            path = HERE / folder / f"{L['id']}.arg0.bin"
            if path.exists():
                got = np.fromfile(path, np.uint16).reshape(-1, 8)
                report[L["id"]][f"{folder}_differs"] = differs(ref, got)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
