"""A spec's ``kernel.args``, ``kernel.const`` and ``kernel.memory`` values: one malformed
whatever the kernel is the spec's error (SH100, exit status 2, at the value) before any trace,
as a bad ``kernel.grid`` is; what only the compiled kernel says (a parameter's name or
position, whether a value fits its type) stays the trace's, an SH008 warning
(tests/lint_fixtures/SH008.yaml, tests/test_hostile_round16.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmem_cli.cuda.launch.values import LaunchError, check_arg_form, check_typed_form

from .hostile import shmem

# each taken by some parameter type: the trace decides whether it fits the one it names
TAKEN = [
    ("0", "1"),
    ("n", "-1"),
    ("n", "0x2a"),
    ("alpha", "1.5"),
    ("alpha", "1e39"),  # a double holds it; a float does not (the trace says so)
    ("alpha", "-inf"),
    ("alpha", "nan"),
    ("flag", "true"),
    ("s", "1,2,3"),
    ("x", str(1 << 70)),  # a decimal integer: a double's value
    ("in", "@buffer.bin"),
    ("m", "tensormap:dtype=f32,dims=64x64,box=32x8"),  # which parameter takes it: the trace
    ("p+8", "zeros:4096"),
    ("p+0x10", "7:2"),
    ("p+4", "1.5:4"),
]
# (key, value, what the error says): refused for every parameter
REFUSED = [
    ("alpha", "1e400", "1e400 is beyond the range of every float"),
    ("alpha", "-1.0e+999", "-1.0e+999 is beyond the range of every float"),
    ("n", "abc", "'abc' is not a number"),
    ("s", "1,,2", "field 1: '' is not a number"),
    ("n", "0x1" + "0" * 16, "does not fit in 8 byte(s)"),
    ("n", "9" * 65, "is too long to be a number"),
    ("in", "zeros:64", "write the key as in+0"),
    (
        "in",
        "zeros:0",
        "'zeros:0' is a pointer to a new zero-filled buffer, given at a byte offset of the "
        "parameter: write the key as in+0; zeros:BYTES wants a count of bytes from 1 to "
        "68,719,476,736 (64 GiB), decimal or 0x... (e.g. zeros:4096), got '0'",
    ),
    ("in", " ", "the value is empty"),
    ("p+8", "zeros:-5", "zeros:BYTES wants a count of bytes from 1 to 68,719,476,736 (64 GiB)"),
    ("p+8", "zeros:0", "zeros:BYTES wants a count of bytes from 1 to 68,719,476,736 (64 GiB)"),
    ("p+x", "1", "the offset after '+' must be a number of bytes"),
    ("p+4", "1:3", "NUMBER[:WIDTH] (one number of 1, 2, 4 or 8 bytes"),
    ("p+4", "300:1", "300 does not fit in 1 byte(s)"),
]


@pytest.mark.parametrize(("key", "value"), TAKEN)
def test_a_value_some_parameter_takes_is_left_to_the_trace(key: str, value: str) -> None:
    check_arg_form(key, value, f"kernel.args {key}")


@pytest.mark.parametrize(("key", "value", "said"), REFUSED)
def test_a_value_no_parameter_takes_is_refused(key: str, value: str, said: str) -> None:
    with pytest.raises(LaunchError) as err:
        check_arg_form(key, value, f"kernel.args {key}")
    assert err.value.message.startswith(f"kernel.args {key}")
    assert said in err.value.message


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("float:1.5,x", "value 1: 'x' is not a number"),
        ("1e400", "value 0: 1e400 is beyond the range of every float"),
        ("", "the value is empty"),
        ("flaot:1", "unknown element type 'flaot' (float, double,"),
        (" uint8:1,2", "unknown element type 'uint8'"),  # uint8_t is the type
        ("1:2", "unknown element type '1'"),  # TYPE:, not NUMBER:WIDTH as at an --arg offset
    ],
)
def test_a_constant_no_type_takes_is_refused(value: str, said: str) -> None:
    with pytest.raises(LaunchError) as err:
        check_typed_form(value, "kernel.const c")
    assert said in err.value.message


def test_a_constant_some_type_takes_is_left_to_the_trace() -> None:
    # every spelling of a type the trace reads (cuda/launch/c_types.py: one table for both)
    typed = ("float4:1", "uint:1", "unsigned long long:1", "size_t:1", "nv_bfloat16:1")
    for value in ("1", "float:1,2,3", "int:64,1,1280", "@table.bin", "1.5,true,-0x10", *typed):
        check_typed_form(value, "kernel.const c")


SPEC = """name: t
block: [32]
kernel:
  source: no_such_kernel.cu
  args: {beta: 1.0e+400}
arrays:
  a: {dtype: float, shape: [32]}
accesses:
  - array: a
    index: [lane]
"""


@pytest.mark.parametrize("command", ["lint", "analyze"])
def test_lint_and_analyze_refuse_a_malformed_value_alike(tmp_path: Path, command: str) -> None:
    # YAML reads 1.0e+400 as inf, which the trace took as inf: the spec's text is checked; an
    # SH008 warning before (exit 0), and analyze took the spec whole
    (tmp_path / "k.yaml").write_text(SPEC)
    ran = shmem(command, "k.yaml", cwd=tmp_path)
    assert ran.code == 2 and "Traceback" not in ran.text, ran.text
    said = "k.yaml:5:16: error: kernel.args beta: 1.0e+400 is beyond the range of every float"
    assert said in ran.text, ran.text


@pytest.mark.parametrize("command", ["lint", "analyze"])
def test_a_misspelt_element_type_is_refused_before_any_trace(tmp_path: Path, command: str) -> None:
    # it was the trace's SH008 warning (exit 0), found only once the kernel was built
    spec = SPEC.replace("  args: {beta: 1.0e+400}", '  memory: {0x7f0000000000: "flaot:1"}')
    (tmp_path / "k.yaml").write_text(spec)
    ran = shmem(command, "k.yaml", cwd=tmp_path)
    assert ran.code == 2 and "Traceback" not in ran.text, ran.text
    said = "k.yaml:5:28: error: kernel.memory 0x7f0000000000: unknown element type 'flaot'"
    assert said in ran.text, ran.text


def test_yamls_own_infinity_is_taken(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(SPEC.replace("1.0e+400", "-.inf"))
    ran = shmem("lint", "k.yaml", cwd=tmp_path)
    assert ran.code == 0 and "no_such_kernel.cu' not found" in ran.text, ran.text
