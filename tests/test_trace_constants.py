"""``__constant__`` memory: the cubin's banks loaded as the driver loads them, values set by
name (``--const``, the Python API, a spec's ``kernel.const``), unset variables named.

The kernel is issue 20's ``ev_const`` (tests/data/trace/everyday/kernels/ev_const.cu): ``stride
= 3`` and ``taps[8]`` initialised in the source, ``offs[8]`` set by the host or left unset. Its
two launches measured on the H200 are compared in test_trace_everyday.py.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.launch.c_types import scalar_of
from shmem_cli.cuda.launch.values import LaunchError
from shmem_cli.trace.kernel.constants import (
    ConstSymbol,
    declared_types,
    read_constants,
    set_constants,
    typed_values,
)

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "everyday" / "ev_const.sm_90.cubin"
SOURCE = TRACE_DATA / "everyday" / "kernels" / "ev_const.cu"


def test_the_cubin_bank_and_its_variables() -> None:
    c = read_constants(CUBIN, "ev_const")
    # declared in this order in ev_const.cu: int, float[8], int[8], packed from offset 0
    assert c.symbols == (
        ConstSymbol("stride", 3, 0, 4),
        ConstSymbol("taps", 3, 4, 32),
        ConstSymbol("offs", 3, 36, 32),
    )
    bank = c.banks[3]
    assert struct.unpack_from("<i", bank, 0) == (3,)
    assert struct.unpack_from("<8f", bank, 4) == (0.5, 0.25, 0.125, 1.0, 2.0, 4.0, 8.0, 16.0)
    assert c.unset == {"offs"}  # no initialiser
    assert c.unset_spans() == {3: [(36, 68, "offs")]}


def test_values_set_by_name_in_the_declared_type() -> None:
    types = declared_types([SOURCE.read_text()])
    assert types == {"stride": "int", "taps": "float", "offs": "int"}
    c = set_constants(read_constants(CUBIN, "ev_const"), ["offs=1,2,3", "taps=2,-1.5"], types=types)
    assert struct.unpack_from("<3i", c.banks[3], 36) == (1, 2, 3)
    assert struct.unpack_from("<2f", c.banks[3], 4) == (2.0, -1.5)
    assert struct.unpack_from("<f", c.banks[3], 12) == (0.125,)  # the rest as initialised
    assert c.unset == frozenset()
    assert c.given == (("offs", "1,2,3"), ("taps", "2,-1.5"))


def test_a_type_named_in_the_value_and_a_file(tmp_path: Path) -> None:
    base = read_constants(CUBIN, "ev_const")
    c = set_constants(base, ["offs=float:1,2"])  # the bytes of two floats
    assert c.banks[3][36:44] == struct.pack("<2f", 1.0, 2.0)
    c = set_constants(base, ["offs=uint16_t:1,2,3,4"])
    assert c.banks[3][36:44] == struct.pack("<4H", 1, 2, 3, 4)
    f = tmp_path / "offs.npy"
    np.save(f, np.arange(8, dtype=np.int32) * 5)
    c = set_constants(base, [f"offs=@{f}"])
    assert c.banks[3][36:68] == struct.pack("<8i", *range(0, 40, 5))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("nosuch=1", "no __constant__ variable of that name (it has: stride, taps, offs)"),
        ("offs=1,2,3,4,5,6,7,8,9", "9 value(s) take 36 bytes; the variable has 32"),
        ("offs=quad:1", "unknown element type 'quad'"),
        ("offs", "expects NAME=VALUE"),
        ("stride=x", "not a number"),
        ("offs=int:1,0.5", "--const offs value 1: '0.5' is not an integer, and its type is int"),
        ("offs=uint8_t:1e3", "value 0: '1e3' is not an integer, and its type is uint8_t (give"),
        ("offs=int:1_0", "value 0: '1_0' is not a number (integers: 42, -1, 0x2a; true, false)"),
    ],
)
def test_bad_values_are_said_in_words(text: str, said: str) -> None:
    with pytest.raises(LaunchError) as exc:
        set_constants(read_constants(CUBIN, "ev_const"), [text])
    assert said in exc.value.message


def test_a_float_for_a_declared_int_is_refused() -> None:
    # `__constant__ int offs[8]`: 1.5 has no int value (its float bits were stored before)
    types = declared_types([SOURCE.read_text()])
    with pytest.raises(LaunchError, match="'1.5' is not an integer"):
        set_constants(read_constants(CUBIN, "ev_const"), ["offs=1,1.5"], types=types)
    c = set_constants(read_constants(CUBIN, "ev_const"), ["taps=1,1.5"], types=types)
    assert struct.unpack_from("<2f", c.banks[3], 4) == (1.0, 1.5)  # floats stay floats


def test_twice_is_refused() -> None:
    with pytest.raises(LaunchError, match="given twice"):
        set_constants(read_constants(CUBIN, "ev_const"), ["offs=1", "offs=2"])


def test_element_types() -> None:
    # (the C type as c_types' INTEGRAL / FLOATING name it, its bytes on CUDA's LP64)
    assert scalar_of("float4") == ("float", 4)
    assert scalar_of("unsigned long long") == ("unsigned long long", 8)
    assert scalar_of("const int") == ("int", 4)
    assert scalar_of("MyStruct") is None
    assert scalar_of("uint2") == ("unsigned int", 4)  # CUDA's uint2: two unsigned ints
    assert scalar_of("ulong4") == ("unsigned long", 8)  # four unsigned longs, 8 bytes each
    assert scalar_of("std::size_t") == ("unsigned long", 8)
    assert scalar_of("__nv_bfloat162") == ("__nv_bfloat16", 2)
    assert scalar_of("nv_bfloat16") == ("__nv_bfloat16", 2)  # cuda_bf16.h's typedef
    assert scalar_of("cutlass::half_t") == ("cutlass::half_t", 2)


def test_an_integer_element_takes_a_bool_as_cpp_converts_it() -> None:
    # `int x = true;` is 1, as --arg takes true for an int parameter
    assert typed_values("true,false,7", "--const n", "int") == struct.pack("<3i", 1, 0, 7)


def test_bool_and_bfloat16_tables_take_values_as_their_type_converts_them() -> None:
    # a bool table stored 2 as the byte 2 and -1 as 0xff (C++ makes both true: 1); a
    # __nv_bfloat16 table took 4-byte ints and floats, twice its elements' size
    text = "__constant__ bool flags[4];\n__constant__ __nv_bfloat16 w[3];"
    types = declared_types([text])
    assert typed_values("2,0,true,-1", "--const flags", types["flags"]) == bytes([1, 0, 1, 1])
    assert typed_values("bool:7", "--const flags") == b"\x01"
    # bfloat16: a float's upper 16 bits; 1.5 = 0x3fc0, 1 = 0x3f80, -2 = 0xc000
    assert typed_values("1.5,1,-2", "--const w", types["w"]) == struct.pack(
        "<3H", 0x3FC0, 0x3F80, 0xC000
    )
    with pytest.raises(LaunchError, match="not an integer"):
        typed_values("1.5", "--const flags", "bool")


def _json(*extra: str) -> dict[str, object]:
    res = CliRunner().invoke(
        main, ["trace", str(CUBIN), "-b", "128", "--format", "json", "--no-tables", *extra]
    )
    assert res.exit_code == 0, res.output
    kernel: dict[str, object] = json.loads(res.output)["files"][0]["kernels"][0]
    return kernel


@needs_nvdisasm
def test_an_unset_variable_is_named_and_its_dependents_flagged() -> None:
    k = _json()
    assert k["unset_constants"] == ["offs"]
    accesses = k["accesses"]
    assert isinstance(accesses, list)
    # line 14 reads tile[(t * offs[k]) % 1024]: 8 loads whose addresses come from offs
    at14 = [a for a in accesses if a["line"] == 14]
    assert len(at14) == 8 and all(a["inexact_requests"] == 4 for a in at14)
    assert all(a["inexact_requests"] == 0 for a in accesses if a["line"] != 14)


@needs_nvdisasm
def test_a_set_variable_is_used_and_listed() -> None:
    k = _json("--const", "offs=1,2,4,8,16,32,33,0")
    assert k["unset_constants"] == [] and k["constants"] == {"offs": "1,2,4,8,16,32,33,0"}
    accesses = k["accesses"]
    assert isinstance(accesses, list)
    at14 = [a["wavefronts"] for a in accesses if a["line"] == 14]
    # per warp (4 warps): stride s -> gcd(s, 32) ways; 0 is one broadcast wavefront
    assert sorted(at14) == sorted(4 * w for w in (1, 2, 4, 8, 16, 32, 1, 1))


@needs_nvdisasm
def test_the_text_report_names_the_unset_variable() -> None:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-b", "128", "--no-tables"])
    assert res.exit_code == 0
    flat = " ".join(res.output.split())
    assert "read __constant__ offs, which neither the cubin initialises" in flat
    assert "--const NAME=" in flat


@needs_nvdisasm
def test_a_bad_const_is_exit_status_2() -> None:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-b", "128", "--const", "nope=1"])
    assert res.exit_code == 2
    assert "no __constant__ variable" in res.output
    assert "Traceback" not in res.output


@needs_nvdisasm
def test_the_python_api_sets_constants() -> None:
    import shmem_cli

    r = shmem_cli.trace(CUBIN, block=128, consts={"offs": np.full(8, 32, dtype=np.int32)})
    assert r.kernel.launch.unset_constants == ()
    at14 = [a.cost.wavefronts for a in r.accesses if a.line == 14]
    assert at14 == [4 * 32] * 8  # stride 32: every lane in one bank


def _spec(const: object) -> dict[str, object]:
    return {
        "name": "const",
        "block": [128],
        "kernel": {"source": str(CUBIN), "const": const},
        "arrays": {"tile": {"dtype": "float", "shape": [1024]}},
        "accesses": [{"array": "tile", "index": ["threadIdx.x"]}],
    }


def test_a_spec_gives_constants_under_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmem_cli.spec.compile import spec_from_mapping

    monkeypatch.chdir(tmp_path)  # a mapping's files are named from the folder it is read in
    (tmp_path / "taps.bin").write_bytes(bytes(16))  # a file the spec names must be there
    spec = spec_from_mapping(_spec({"offs": [1, 2, 3], "stride": 5, "taps": "@taps.bin"}))
    assert spec.kernel is not None
    consts = dict(spec.kernel.consts)
    assert consts["offs"] == "1,2,3" and consts["stride"] == "5"
    assert consts["taps"].startswith("@") and consts["taps"].endswith("taps.bin")


def test_a_spec_constant_name_must_be_an_identifier() -> None:
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.spec.compile import spec_from_mapping

    with pytest.raises(ShmemError):
        spec_from_mapping(_spec({"bad name": 1}))
