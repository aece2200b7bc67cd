"""shmem sweep: option parsing, ranking, invalid variants, reuse, JSON/text output and --suggest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from shmem_cli.analysis.analyze import analyze_spec
from shmem_cli.analysis.suggest import suggest
from shmem_cli.analysis.sweep import (
    Evaluator,
    Plan,
    parse_axis,
    parse_swizzle,
    parse_values,
    run_sweep,
    split_swizzles,
)
from shmem_cli.cli import main
from shmem_cli.hardware.swizzle import TMA_SWIZZLES
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.compile import SpecFile, load_spec, spec_from_mapping
from shmem_cli.spec.layout import Variant

from .conftest import ROOT as REPO

SPECS = REPO / "access_specs"
TRANSPOSE = SPECS / "transpose_naive.yaml"


def plan(*options: tuple[str, str]) -> Plan:
    return Plan.of([parse_axis(kind, text) for kind, text in options])


# --- option parsing ----------------------------------------------------------------


def test_ranges_are_inclusive() -> None:
    assert parse_values("0..4") == (0, 1, 2, 3, 4)
    assert parse_values("0..32:8") == (0, 8, 16, 24, 32)
    assert parse_values("1..6:2") == (1, 3, 5)
    assert parse_values("3") == (3,)
    assert parse_values("4, 1,9") == (4, 1, 9)
    assert parse_values("-2..1") == (-2, -1, 0, 1)


@pytest.mark.parametrize("text", ["4..0", "0..4:0", "0..4:-1", "a..b", "", "1,,2", "0..", "1.5"])
def test_bad_ranges(text: str) -> None:
    with pytest.raises(ValueError):
        parse_values(text)


def test_swizzle_lists() -> None:
    assert split_swizzles("none,Swizzle<3,4,3>,128B") == ["none", "Swizzle<3,4,3>", "128B"]
    assert parse_swizzle("none") is None
    assert parse_swizzle("128b") is TMA_SWIZZLES["128B"]
    s = parse_swizzle("Swizzle<3, 4, 4>")
    assert s is not None and s.cute_form() == (3, 4, 4)
    axis = parse_axis("swizzle", "A=none,64B")
    assert axis.target == "A" and axis.values == (None, TMA_SWIZZLES["64B"])


def test_axes() -> None:
    a = parse_axis("pad", "tile=0..2")
    assert (a.kind, a.target, a.values) == ("pad", "tile", (0, 1, 2))
    assert parse_axis("pad", "0..1").target is None
    assert parse_axis("param", "N=4,8").values == (4, 8)
    for kind, text in [
        ("param", "4..8"),
        ("pad", "-1..2"),
        ("pad", "1x=0..2"),
        ("swizzle", "A=99B"),
    ]:
        with pytest.raises(ValueError):
            parse_axis(kind, text)


def test_cross_product_order_params_slowest_swizzle_fastest() -> None:
    p = plan(("swizzle", "none,128B"), ("pad", "0..1"), ("param", "N=4,8"))
    assert [a.kind for a in p.axes] == ["param", "pad", "swizzle"]
    points = list(p.points())
    assert len(points) == p.size == 8
    assert points[0] == (4, 0, None)
    assert points[1] == (4, 0, TMA_SWIZZLES["128B"])
    assert points[2] == (4, 1, None)
    assert points[4][0] == 8


def test_unknown_names_are_reported() -> None:
    spec = load_spec(TRANSPOSE)
    for option in [("pad", "tiel=0..1"), ("param", "TILE=1,2")]:
        with pytest.raises(ShmemError) as info:
            plan(option).check(spec)
        assert "did you mean" in info.value.message


# --- results -----------------------------------------------------------------------


def test_transpose_pad_sweep_by_hand() -> None:
    # 32x8 block, j = 0, 8, 16, 24: each access makes 8 warps x 4 = 32 requests.
    # Row store: 1 wavefront each. Column load: lane tx reads word 32*tx + r (+ pad*tx):
    # pad 0 -> one bank, 32-way; pad 1 or 3 (odd) -> 32 banks; pad 2 -> 2-way; pad 4 -> 4-way.
    result = run_sweep(load_spec(TRANSPOSE), plan(("pad", "0..4")))
    rows = [
        (v.outcome.totals.wavefronts, v.outcome.totals.max_ways, v.outcome.extra_bytes)
        for v in result.variants
    ]
    assert rows == [
        (32 + 32 * 32, 32, 0),
        (32 + 32, 1, 128),
        (32 + 64, 2, 256),
        (32 + 32, 1, 384),
        (32 + 128, 4, 512),
    ]
    assert (
        result.best is not None and result.best.index == 1
    )  # pad 3 ties on wavefronts, costs more
    assert [a.totals.wavefronts for a in result.variants[0].outcome.accesses] == [32, 1024]
    assert all(v.outcome.fits for v in result.variants)


def test_swizzle_tie_goes_to_sweep_order() -> None:
    result = run_sweep(
        load_spec(SPECS / "sweep_ldmatrix_swizzle.yaml"), plan(("swizzle", "none,32B,64B,128B"))
    )
    # 8 A requests and 16 B requests, ldmatrix.x4: 4 wavefronts each when conflict-free
    waves = [v.outcome.totals.wavefronts for v in result.variants]
    assert waves == [4 * 96, 2 * 96, 96, 96]
    assert result.best is not None and result.best.settings.swizzle == "64B"


def test_pad_fixes_the_fp16_transpose_at_two() -> None:
    result = run_sweep(load_spec(SPECS / "sweep_transpose_pad.yaml"), plan(("pad", "0..4")))
    assert result.best is not None and result.best.settings.pad == 2
    assert result.best.outcome.totals.excess_wavefronts == 0
    assert [v.outcome.totals.max_ways for v in result.variants] == [32, 2, 1, 2, 2]


OOB = {
    "block": [32],
    "arrays": {"tile": {"dtype": "float32", "shape": [32, 32], "pad": 1}},
    "accesses": [
        {"name": "read the pad column", "array": "tile", "index": ["lane", 32]},
        {"name": "read a row", "array": "tile", "index": [0, "lane"]},
    ],
}


def test_a_variant_indexing_past_its_pad_is_invalid_not_fatal() -> None:
    result = run_sweep(spec_from_mapping(OOB), plan(("pad", "0..2")))
    first, second, third = result.variants
    assert not first.outcome.valid
    assert first.outcome.error is not None
    assert "out of bounds" in first.outcome.error.message
    assert first.ranked().to_json()["wavefronts"] is None
    assert second.outcome.valid and third.outcome.valid
    # pad 1: rows of 33 words -> column 32 of row `lane` is word 33*lane + 32: 32 banks
    assert second.outcome.accesses[0].totals.wavefronts == 1
    assert result.best is second


BIG = {
    "block": [32],
    "arrays": {"big": {"dtype": "float32", "shape": [448, 128]}},  # 229,376 B of 232,448
    "accesses": [{"array": "big", "index": ["lane", 0]}],
}


def test_a_variant_that_does_not_fit_is_shown_but_never_best() -> None:
    result = run_sweep(spec_from_mapping(BIG), plan(("pad", "0,1,8")))
    fits = [v.outcome.fits for v in result.variants]
    assert fits == [True, True, False]  # pad 8: 448 * 136 * 4 = 243,712 B
    unfit = result.variants[2].outcome
    assert unfit.smem_bytes == 448 * 136 * 4
    # still analyzed: rows of 136 words put lane l in bank 8*l % 32: 4 banks, 8 lanes each, 8-way
    assert unfit.totals.wavefronts == 8
    assert result.best is result.variants[1]  # pad 1: 1 wavefront
    # without the fitting pad 1, pad 8 still does not win
    only = run_sweep(spec_from_mapping(BIG), plan(("pad", "0,8")))
    assert only.best is only.variants[0]


def test_a_param_in_a_loop_bound_is_honoured() -> None:
    data = {
        "block": [64],
        "params": {"N": 2},
        "arrays": {"a": {"dtype": "float32", "shape": [64, 32]}},
        "accesses": [{"array": "a", "index": ["tid % 32", "j"], "loop": {"j": "0..N-1"}}],
    }
    result = run_sweep(spec_from_mapping(data), plan(("param", "N=2,5")))
    assert [v.outcome.accesses[0].totals.requests for v in result.variants] == [2 * 2, 5 * 2]
    assert [v.settings.params for v in result.variants] == [{"N": 2}, {"N": 5}]


LOOP_PARAMS = """\
name: loop params
params: {N: 4, D: 2}
block: [32]
arrays:
  a: {dtype: float32, shape: [64, 32]}
accesses:
  - array: a
    index: [j, lane]
    loop: {j: 0..N/D}
"""


def test_a_param_value_that_breaks_a_loop_bound_is_located(tmp_path: Path) -> None:
    path = tmp_path / "loop_params.yaml"
    path.write_text(LOOP_PARAMS)
    result = run_sweep(load_spec(path), plan(("param", f"N=4,{2**62}"), ("param", "D=2,0")))
    errors = [
        None if (e := v.outcome.error) is None else (e.message, e.line, e.column)
        for v in result.variants
    ]
    assert errors == [
        None,
        ("loop range of 'j': division by zero", 9, 19),  # the '/' of N/D (line 9)
        ("param 'N' is too large", 2, 13),  # the value of N (line 2)
        ("param 'N' is too large", 2, 13),
    ]
    assert result.variants[0].outcome.accesses[0].totals.requests == 3  # j = 0..4/2


def test_a_params_value_does_not_parse_the_spec_again(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_from_mapping(yaml.safe_load(LOOP_PARAMS))

    def refuse(*args: Any) -> Any:
        raise AssertionError("the YAML source was parsed again")

    monkeypatch.setattr("shmem_cli.spec.source.load_yaml", refuse)
    result = run_sweep(spec, plan(("param", "N=4,8,16")))
    assert [v.outcome.accesses[0].totals.requests for v in result.variants] == [
        3,
        5,
        9,
    ]  # j = 0..N/2


def test_each_params_value_is_resolved_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The work bound's layout of a params value (no pad or swizzle changed) is the one its
    variant is analyzed under: resolved once, not again for the variant."""
    from shmem_cli.analysis.sweep import evaluate

    spec = spec_from_mapping(yaml.safe_load(LOOP_PARAMS))
    plain: list[tuple[tuple[str, int], ...]] = []
    original = evaluate.resolve

    def counting(spec: SpecFile, variant: Variant | None = None) -> Any:
        if variant is not None and not variant.pad and not variant.swizzle:
            plain.append(tuple(sorted(variant.params.items())))
        return original(spec, variant)

    monkeypatch.setattr(evaluate, "resolve", counting)
    result = run_sweep(spec, plan(("param", "N=4,8,16")))
    assert [v.outcome.accesses[0].totals.requests for v in result.variants] == [3, 5, 9]
    assert plain == [(("N", 4),), (("N", 8),), (("N", 16),)]


def variants_for(spec: SpecFile) -> list[Variant]:
    names = list(spec.arrays)
    out = [Variant()]
    for p in (0, 1, 3):
        out.append(Variant(pad=dict.fromkeys(names, p)))
    for mode in ("32B", "128B"):
        out.append(
            Variant(pad=dict.fromkeys(names, 0), swizzle=dict.fromkeys(names, TMA_SWIZZLES[mode]))
        )
    return out


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.yaml")), ids=lambda p: p.stem)
def test_sweep_numbers_equal_the_analysis(path: Path) -> None:
    """Both evaluation paths (index cache, chunked) give analyze_spec's totals, or its error."""
    spec = load_spec(path)
    fast, slow = Evaluator(spec), Evaluator(spec, cache_lanes=0)
    for variant in variants_for(spec):
        got = [fast.evaluate(variant), slow.evaluate(variant)]
        try:
            ref = analyze_spec(spec, variant, detail=False)
        except ShmemError as exc:
            for out in got:
                assert out.error is not None or not out.fits, (variant, exc.message)
                if out.error is not None:
                    assert out.error.message == exc.message
            continue
        for out in got:
            assert out.valid and out.fits
            assert out.smem_bytes == ref.smem_bytes
            for mine, theirs in zip(out.accesses, ref.accesses, strict=True):
                assert (
                    mine.totals.requests,
                    mine.totals.wavefronts,
                    mine.totals.ideal_wavefronts,
                    mine.totals.max_ways,
                    mine.totals.cycles,
                    mine.totals.conflicted_requests,
                ) == (
                    theirs.requests,
                    theirs.wavefronts,
                    theirs.ideal_wavefronts,
                    theirs.max_ways,
                    theirs.cycles,
                    theirs.conflicted_requests,
                ), (path.stem, variant, mine.name)


def test_index_expressions_are_evaluated_once_per_params(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_from_mapping(
        {
            "block": [1024],
            "arrays": {"tile": {"dtype": "float32", "shape": [64, 64]}},
            "accesses": [
                {
                    "array": "tile",
                    "index": ["lane + 32 * (warp % 2)", "(warp / 2 + j) % 64"],
                    "loop": {"j": "0..255"},
                }
            ],
        }
    )
    calls = []
    original = Evaluator._chunk

    def counting(*args: Any) -> Any:
        calls.append(args[2:])
        return original(*args)

    monkeypatch.setattr(Evaluator, "_chunk", staticmethod(counting))
    result = run_sweep(spec, plan(("pad", "0..32")))
    assert len(result.variants) == 33
    # every loop iteration evaluated exactly once for all 33 variants
    covered = sorted(i for start, count in calls for i in range(start, start + count))
    assert covered == list(range(256))
    # lane l reads row l (+32) of a (64+p)-word pitch: bank (l*(64+p) + c) % 32
    by_pad = {v.point[0]: v.outcome.totals.max_ways for v in result.variants}
    assert by_pad[0] == 32 and by_pad[1] == 1 and by_pad[2] == 2 and by_pad[32] == 32


def test_ldmatrix_lanes_without_an_address_and_idle_warps_are_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index cache uses Space's lanes: only lanes 0..7 give the rows of one matrix."""
    spec = spec_from_mapping(
        {
            "block": [64],
            "arrays": {"h": {"dtype": "float16", "shape": [64, 64]}},
            "accesses": [
                {
                    "array": "h",
                    "op": "ldmatrix",
                    "matrices": 1,
                    # 64 / (lane - 20) faults on lane 20 only, which gives no address
                    "index": ["lane % 8 + 64 / (lane - 20) * 0", "8 * warp"],
                    "when": "warp < 1",  # warp 1 does not run it
                }
            ],
        }
    )

    def refuse(*args: Any) -> Any:
        raise AssertionError("the chunked path was used")

    monkeypatch.setattr(Evaluator, "_slow", staticmethod(refuse))
    result = run_sweep(spec, plan(("pad", "0,8")))
    got = [
        (a.totals.requests, a.totals.wavefronts, a.totals.max_ways)
        for v in result.variants
        for a in v.outcome.accesses
    ]
    # rows 0..7 of warp 0: a 128-byte pitch puts all eight 16-byte rows on banks 0..3
    # (8 wavefronts); a 144-byte pitch (pad 8 halves) spreads them over all 32 banks (1 wavefront)
    assert got == [(1, 8, 8), (1, 1, 1)]


# --- command line ------------------------------------------------------------------


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["sweep", *args])


def test_cli_json() -> None:
    res = run(str(TRANSPOSE), "--pad", "0..4", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["schema_version"] == 1
    assert doc["file"] == str(TRANSPOSE)
    assert [v["pad"] for v in doc["variants"]] == [0, 1, 2, 3, 4]
    assert [v["wavefronts"] for v in doc["variants"]] == [1056, 64, 96, 64, 160]
    assert [v["extra_bytes"] for v in doc["variants"]] == [0, 128, 256, 384, 512]
    assert doc["variants"][0]["accesses"][1]["max_ways"] == 32
    assert (
        doc["best"]["pad"] == 1
        and doc["best"]["wavefronts"] == 64
        and doc["best"]["swizzle"] is None
    )


def test_cli_json_per_array_settings() -> None:
    res = run(
        str(SPECS / "ldmatrix_fragments.yaml"),
        "--pad",
        "A=0,8",
        "--swizzle",
        "A=none,128B",
        "-f",
        "json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [(v["pad"], v["swizzle"]) for v in doc["variants"]] == [
        ({"A": 0}, {"A": "none"}),
        ({"A": 0}, {"A": "128B"}),
        ({"A": 8}, {"A": "none"}),
        ({"A": 8}, {"A": "128B"}),
    ]
    assert doc["best"]["pad"] == {"A": 0} and doc["best"]["swizzle"] == {"A": "128B"}
    # extra bytes count only the swept array A: pad 8 on 64 rows of halves
    assert [v["extra_bytes"] for v in doc["variants"]] == [0, 0, 1024, 1024]


def test_cli_text_marks_the_best_row() -> None:
    res = run(str(TRANSPOSE), "--pad", "0..2")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    marked = [line for line in lines if line.startswith("best ")]
    assert len(marked) == 1 and marked[0].split()[1] == "1"
    assert not any(line.startswith("*") for line in lines)  # "*" is only ok*'s
    assert "best: pad 1: 64 wavefronts (conflict-free), +128 B shared" in res.output
    assert "inclusive" in res.output
    # two accesses: a column each
    assert "store tile[ty+j][tx] (row)" in res.output and "1,024 32-way" in res.output


def test_cli_text_shows_invalid_rows(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "oob.yaml"
    path.write_text(yaml.safe_dump(OOB))
    res = run(str(path), "--pad", "0..1")
    assert res.exit_code == 0, res.output
    assert "invalid: line" in res.output
    assert "1 invalid variant(s)" in res.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "nothing to sweep"),
        (["--pad", "4..0"], "empty"),
        (["--pad", "nope=0..1"], "no array 'nope'"),
        (["--param", "X=1"], "no param 'X'"),
        (["--swizzle", "96B"], "unknown swizzle"),
        (["--pad", "0..100000"], "more than"),
    ],
)
def test_cli_usage_errors(args: list[str], needle: str) -> None:
    res = run(str(TRANSPOSE), *args)
    assert res.exit_code == 2
    assert needle in res.output


# 1,024 threads, loop i over 0..N: (N + 1) x 1,024 lane-accesses of weight 1
LONG_LOOP = """\
block: [1024]
params: {N: 1023}
arrays:
  a: {dtype: float, shape: [1024]}
accesses:
  - {name: r, array: a, index: [(threadIdx.x + i) % 1024], loop: {i: 0..N}}
"""


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        # 5,001 pads x 2 swizzles (100,000 variants took 150 s and 800 MB of rows)
        (["--pad", "0..5000", "--swizzle", "none,32B"], "10,002 variants; the limit is 10,000"),
        # N = 2^21 - 1: 2^31 lane-accesses, too many to reuse: 2^32 units for two pads
        (["--param", "N=2097151", "--pad", "0..1"], "reached at its params value number 1"),
        # 2^30, 2^30 - 1,024, then 2^30 - 2,048 lane-accesses: past 2^31 with the third
        (["--param", "N=1048575,1048574,1048573"], "reached at its params value number 3"),
        # N = 2^13 - 1: 2^23 lane-accesses, their index values reused, yet costed under each
        # of 257 pads: 2^23 x 257 units, past 2^31 by one pad
        (["--param", "N=8191", "--pad", "0..256"], "reached at its params value number 1"),
    ],
)
def test_sweep_work_is_bounded_before_it_starts(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    """A sweep is refused before its first variant when its variants or their work
    (summed over the params values; each would take tens of seconds) exceed the bounds."""
    path = tmp_path / "long.yaml"
    path.write_text(LONG_LOOP)
    res = run(str(path), *args)
    assert res.exit_code == 2 and needle in res.output, res.output
    assert "Traceback" not in res.output


def test_sweep_work_counts_a_reused_access_once_and_its_requests_per_layout() -> None:
    from types import SimpleNamespace

    from shmem_cli.spec.budget import MAX_SWEEP_WORK, sweep_refusal

    # weight 1 (a short index), 2^23 lane-accesses: the evaluator's cache holds them
    space = SimpleNamespace(access=SimpleNamespace(index=[SimpleNamespace(text="i")], when=None))
    space.lane_accesses = 1 << 23
    assert MAX_SWEEP_WORK == (1 << 23) * 256
    assert sweep_refusal([[space]], 256, 1 << 23) is None  # 2^23 + 255 x 2^23: the limit
    assert sweep_refusal([[space]], 257, 1 << 23) is not None
    assert sweep_refusal([[space]] * 2, 128, 1 << 23) is None  # per params value, summed
    assert sweep_refusal([[space]] * 2, 129, 1 << 23) is not None


def test_cli_invalid_spec_is_located(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "block: [32]\narrays:\n  t: {dtype: float32, shape: [8]}\n"
        "accesses:\n  - {array: u, index: [0]}\n"
    )
    res = run(str(path), "--pad", "0..1")
    assert res.exit_code == 2
    assert f"{path}:5:" in res.output and "unknown array" in res.output


def test_cli_help_says_inclusive_and_has_examples() -> None:
    res = run("--help")
    assert res.exit_code == 0
    assert "INCLUSIVE" in res.output and "Examples:" in res.output and "--swizzle" in res.output


# --- analyze --suggest ---------------------------------------------------------------


def test_suggest_transpose_swizzle_before_pad() -> None:
    """The float 32x32 transpose: a pad of one float removes the conflict for 128 bytes,
    the synthesized XOR swizzle (CuTe Swizzle<5,0,5> on the element index) for none."""
    spec = load_spec(TRANSPOSE)
    hints = suggest(spec, analyze_spec(spec))
    assert list(hints) == ["load tile[tx][ty+j] (column)"]
    hint = hints["load tile[tx][ty+j] (column)"]
    assert "swizzle tile none -> Swizzle<5,2,5> (no extra bytes)" in hint
    assert "1,024 -> 32 wavefronts, conflict-free" in hint
    assert "i ^ ((i >> 5) & 0x1f)" in hint
    assert "optimal" in hint


def test_suggest_pad_where_no_swizzle_applies() -> None:
    """float tile[33][30] is not a whole number of 128-byte lines (3,960 bytes): an XOR
    map of its bank bits would move its last words outside it, so the pad of one float
    (rows of 31 words: every lane its own bank) is the fix."""
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"tile": {"dtype": "float32", "shape": [33, 30]}},
            "accesses": [{"array": "tile", "index": ["lane", "0"]}],
        }
    )
    (hint,) = suggest(spec, analyze_spec(spec)).values()
    assert "pad tile 0 -> 1 (tile[33][31])" in hint


def test_suggest_prefers_a_free_swizzle_over_padding() -> None:
    spec = load_spec(SPECS / "ldmatrix_fragments.yaml")
    hints = suggest(spec, analyze_spec(spec))
    assert list(hints) == ["ldmatrix.x4 A fragment (unpadded)"]
    assert "swizzle A none -> 128B (no extra bytes)" in hints["ldmatrix.x4 A fragment (unpadded)"]


def test_suggest_pitch_matched_swizzle_for_256_byte_rows() -> None:
    spec = load_spec(SPECS / "flash_attn_k_tile_swizzle.yaml")
    hints = suggest(spec, analyze_spec(spec))
    assert (
        "swizzle K none -> Swizzle<3,4,4> (no extra bytes)"
        in hints["ldmatrix.x4 K fragments, plain"]
    )


def test_suggest_says_when_nothing_helps() -> None:
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"buf": {"dtype": "int32", "shape": [64]}},
            # atomicExch on one word: every lane its own bank access, whatever the layout
            "accesses": [{"array": "buf", "op": "atomic", "atomic": "exch", "index": ["0"]}],
        }
    )
    hints = suggest(spec, analyze_spec(spec))
    assert "no pad 0..32 or swizzle" in next(iter(hints.values()))


def test_analyze_suggest_cli() -> None:
    res = CliRunner().invoke(
        main,
        [
            "analyze",
            str(TRANSPOSE),
            str(SPECS / "transpose_padded.yaml"),
            "--suggest",
            "--no-tables",
        ],
    )
    assert res.exit_code == 0, res.output
    hints = [line for line in res.output.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1
    assert hints[0].startswith("hint: cheapest fix: swizzle tile none -> Swizzle<5,2,5>")


def test_a_synth_swizzle_of_every_array_shows_the_maps_it_found(tmp_path: Path) -> None:
    # `--swizzle none,synth` (no ARRAY=): the row and the best line said "synth" alone,
    # where `--swizzle tile=synth` shows the map found (the one that makes the column read
    # of the 32x32 float transpose conflict-free: Swizzle<5,2,5>, as test_suggest_... finds)
    res = run(str(TRANSPOSE), "--swizzle", "none,synth")
    assert res.exit_code == 0, res.output
    assert "best: swizzle synth Swizzle<5,2,5>: 64 wavefronts (conflict-free)" in res.output
    doc = json.loads(run(str(TRANSPOSE), "--swizzle", "none,synth", "-f", "json").output)
    assert [v["swizzle"] for v in doc["variants"]] == ["none", "synth Swizzle<5,2,5>"]
    # two arrays: each one's map, by name (b needs none: its reads are a row)
    two = tmp_path / "two.yaml"
    two.write_text(
        "block: [32]\n"
        "arrays:\n  a: {dtype: float, shape: [32, 32]}\n  b: {dtype: float, shape: [32, 32]}\n"
        "accesses:\n"
        "  - {array: a, index: [lane, 0]}\n"
        "  - {array: b, index: [0, lane]}\n"
    )
    res = run(str(two), "--swizzle", "none,synth")
    assert res.exit_code == 0, res.output
    best = next(line for line in res.output.splitlines() if line.startswith("best: "))
    # one warp, one request each: a column read of a, 32 wavefronts unswizzled, 1 swizzled;
    # a row of b, 1
    assert best.startswith("best: swizzle synth a Swizzle<") and ", b none: 2 wavefronts" in best
