"""Inputs that never end, never come, or unpack without end: exit 2 with the path and the
reason, at once and with bounded memory (docs/robustness.md, "Reading files")."""

from __future__ import annotations

import contextlib
import gzip
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.lint import baseline
from shmem_cli.plumbing import bounded_read
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.verify import sass_check

SPEC = """\
block: [32]
arrays:
  a: {dtype: float32, shape: [32, 32]}
accesses:
  - name: column read
    array: a
    index: [lane, 0]
"""
ZERO = "/dev/zero"


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner(env=env).invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.stdout + result.stderr


def shmem(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A separate process with a timeout: if a FIFO were waited on, the test fails, not hangs."""
    return subprocess.run(
        [sys.executable, "-m", "shmem_cli.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return path


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


needs_zero = pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")


# --- baselines ---------------------------------------------------------------------------


@needs_zero
def test_baseline_from_dev_zero(spec: Path) -> None:
    code, out = run("lint", str(spec), "--baseline", ZERO)
    assert code == 2
    assert f"{ZERO}: error: cannot read baseline: it is a character device" in out


def test_baseline_from_a_fifo(spec: Path, fifo: Path) -> None:
    done = shmem("lint", str(spec), "--baseline", str(fifo))
    assert done.returncode == 2
    assert "cannot read baseline: it is a FIFO (named pipe), not a regular file" in done.stderr


def test_baseline_over_the_size_limit(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.json"
    big.write_text('{"findings": [], "pad": "' + "x" * 5000 + '"}')
    monkeypatch.setattr(baseline, "MAX_BASELINE_BYTES", 4096)
    code, out = run("lint", str(spec), "--baseline", str(big))
    assert code == 2
    assert f"{big}: error: baseline is larger than the limit of 4096 bytes" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"findings": [], "n": ' + "9" * 5000 + "}", "holds a value shmem does not read"),
        (b"\xc3\x28{}".decode("latin-1"), "not UTF-8 text"),  # (a UTF-16 mark: round 16's)
    ],
)
def test_hostile_baseline_json(tmp_path: Path, spec: Path, text: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(text.encode("latin-1"))
    code, out = run("lint", str(spec), "--baseline", str(path))
    assert code == 2
    assert f"{path}: error: baseline " in out and message in out
    assert "Traceback" not in out


# --- ncu CSVs and SASS dumps -------------------------------------------------------------


@needs_zero
def test_ncu_csv_from_dev_zero(spec: Path) -> None:
    code, out = run("verify", str(spec), "--from-ncu", ZERO)
    assert code == 2
    assert f"{ZERO}: error: cannot read the ncu CSV: it is a character device" in out


def test_ncu_csv_from_a_fifo(spec: Path, fifo: Path) -> None:
    done = shmem("verify", str(spec), "--from-ncu", str(fifo))
    assert done.returncode == 2
    assert "cannot read the ncu CSV: it is a FIFO" in done.stderr


def test_ncu_csv_over_the_size_limit(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmem_cli.verify import ncu

    csv = tmp_path / "ncu.csv"
    csv.write_text('"ID","Kernel Name","Metric Name","Metric Value"\n' * 1000)
    monkeypatch.setattr(ncu, "MAX_CSV_BYTES", 1 << 20 >> 6)
    code, out = run("verify", str(spec), "--from-ncu", str(csv))
    assert code == 2
    assert "the ncu CSV is larger than the limit of 16384 bytes" in out


@needs_zero
def test_sass_from_dev_zero(tmp_path: Path, spec: Path) -> None:
    csv = tmp_path / "ncu.csv"
    csv.write_text('"ID","Kernel Name","Metric Name","Metric Value"\n"0","k","m","1"\n')
    code, out = run("verify", str(spec), "--from-ncu", str(csv), "--sass", ZERO)
    assert code == 2
    assert f"{ZERO}: error: cannot read the SASS dump: it is a character device" in out


def test_gzip_bomb_stops_at_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = tmp_path / "sass.txt.gz"
    bomb.write_bytes(gzip.compress(b"\0" * (8 << 20)))  # 8 MiB of zeros in about 8 KB
    assert bomb.stat().st_size < 64 << 10
    monkeypatch.setattr(sass_check, "MAX_DUMP_BYTES", 1 << 20)
    with pytest.raises(ShmemError, match="larger than the limit of 1 MiB"):
        sass_check.read_dump(bomb)


def test_gzip_members_are_all_read(tmp_path: Path) -> None:
    dump = tmp_path / "sass.txt.gz"
    dump.write_bytes(gzip.compress(b"Function : a\n") + gzip.compress(b"Function : b\n"))
    assert sass_check.read_dump(dump) == "Function : a\nFunction : b\n"


class _Fed:
    """A zlib unpacker that counts the bytes handed to it (into ``fed``)."""

    fed = 0

    def __init__(self, unpacker: Any) -> None:
        self._unpacker = unpacker

    def decompress(self, data: Any, max_length: int = 0) -> bytes:
        _Fed.fed += len(data)
        return self._unpacker.decompress(data, max_length)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._unpacker, name)


def _gunzip_fed(monkeypatch: pytest.MonkeyPatch, path: Path) -> int:
    """The bytes handed to zlib to read ``path``, refused or not."""
    unpacker = zlib.decompressobj
    monkeypatch.setattr(zlib, "decompressobj", lambda **kw: _Fed(unpacker(**kw)))
    _Fed.fed = 0
    with contextlib.suppress(ShmemError):
        bounded_read.read_bounded(path, 8 << 20, gunzip=True)
    monkeypatch.setattr(zlib, "decompressobj", unpacker)
    return _Fed.fed


def test_gzip_members_are_read_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each member used to be handed the whole rest of the file (zlib copies what it does not
    use): 200,000 empty members (4 MB) took 35 s. Now each member is handed a 1 KiB piece,
    then doubling ones: zlib is handed at most twice the file and 1 KiB a member (the old
    reader handed it gigabytes), and past 10,000 members the file is refused."""
    dump = tmp_path / "many.gz"
    members = [gzip.compress(f"{k}\n".encode()) + bytes(k % 3) for k in range(10_000)]
    big = gzip.compress(bytes(range(256)) * 4096)  # 1 MiB in one member, fed in pieces
    dump.write_bytes(b"".join(members) + big)
    with pytest.raises(ShmemError, match="more than 10,000 gzip members"):
        bounded_read.read_bounded(dump, 8 << 20, gunzip=True)
    dump.write_bytes(b"".join(members[:-1]) + big)
    text = bounded_read.read_bounded(dump, 8 << 20, gunzip=True)
    assert text == "".join(f"{k}\n" for k in range(9_999)).encode() + bytes(range(256)) * 4096
    size = dump.stat().st_size
    assert size < _gunzip_fed(monkeypatch, dump) <= 2 * size + 10_000 * 1024
    dump.write_bytes(gzip.compress(b"") * 200_000)
    with pytest.raises(ShmemError, match="more than 10,000 gzip members"):
        bounded_read.read_bounded(dump, 8 << 20, gunzip=True)
    assert _gunzip_fed(monkeypatch, dump) <= 10_000 * 1024  # the first 10,000 members' pieces


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (gzip.compress(bytes(range(256)) * 40)[:-30], "ends too soon"),
        (b"\x1f\x8b" + b"\x00" * 30, "bad gzip data"),
    ],
)
def test_broken_gzip(tmp_path: Path, data: bytes, message: str) -> None:
    dump = tmp_path / "sass.txt.gz"
    dump.write_bytes(data)
    with pytest.raises(ShmemError, match=message):
        bounded_read.read_bounded(dump, 1 << 20, gunzip=True)


def test_hostile_manifest_beside_the_csv(tmp_path: Path) -> None:
    from shmem_cli.verify import runner

    (tmp_path / runner.MANIFEST).write_text("[" * 100_000)
    assert runner.recorded_arch(tmp_path) == ""
    (tmp_path / runner.MANIFEST).write_text('{"arch": ' + "1" * 5000 + "}")
    assert runner.recorded_arch(tmp_path) == ""
    (tmp_path / runner.MANIFEST).write_text('{"arch": "sm_90"}')
    assert runner.recorded_arch(tmp_path) == "sm_90"


# --- specs that are FIFOs or devices -----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("analyze",),
        ("lint",),
        ("sweep", "--pad", "0..1"),
        ("verify", "--emit", "EMIT"),
    ],
)
def test_a_spec_that_is_a_fifo(tmp_path: Path, fifo: Path, command: tuple[str, ...]) -> None:
    name, *rest = command
    rest = [str(tmp_path / "emit") if r == "EMIT" else r for r in rest]
    done = shmem(name, str(fifo), *rest)
    # every command exits 2 on a spec it cannot read (lint also reports it as SH100)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{fifo}: error: cannot read spec: it is a FIFO (named pipe)" in (
        done.stdout + done.stderr
    )
    assert "Traceback" not in done.stderr


@needs_zero
def test_a_spec_that_is_dev_zero() -> None:
    code, out = run("analyze", ZERO)
    assert code == 2
    assert f"{ZERO}: error: cannot read spec: it is a character device" in out


def test_step_summary_that_is_a_fifo(spec: Path, fifo: Path) -> None:
    done = shmem("lint", str(spec), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(fifo)})
    assert done.returncode == 1  # the findings decide; the summary only warns
    assert "cannot write the step summary" in done.stderr
    assert "not a regular file" in done.stderr or "nobody reads" in done.stderr


def test_step_summary_appends(tmp_path: Path, spec: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    code, _ = run(
        "lint", str(spec), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert code == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n") and len(text) > len("earlier step\n")


@pytest.mark.parametrize(
    "value", ["9" * 5000, "[" * 5000 + "]" * 5000], ids=["5000 digits", "5000 deep"]
)
def test_hostile_lint_config(tmp_path: Path, spec: Path, value: str) -> None:
    config = tmp_path / "shmem.toml"
    config.write_text(f"[tool.shmem]\nx = {value}\n")
    code, out = run("lint", "--config", str(config), str(spec))
    assert code == 2
    assert f"{config}: error: the TOML holds a number too long or nesting too deep" in out


def test_ncu_csv_with_a_field_past_the_csv_limit_is_located(tmp_path: Path, spec: Path) -> None:
    """A field longer than Python's csv allows (128 KiB) ended `verify --from-ncu` in a
    traceback (_csv.Error); now an error at the row that holds it."""
    csv_file = tmp_path / "ncu.csv"
    header = '"ID","Kernel Name","Metric Name","Metric Value"\n'
    csv_file.write_text("==PROF== note\n" + header + '"1","k","m","' + "x" * 200_000 + '"\n')
    code, out = run("verify", str(spec), "--from-ncu", str(csv_file))
    assert code == 2
    assert f"{csv_file}:3:1: error: not ncu --csv output: field larger than field limit" in out


def test_examples_copy_onto_what_is_no_folder(tmp_path: Path) -> None:
    """`examples --copy /dev/null` (a device, which click's folder check lets pass) ended in a
    FileExistsError traceback; a kernels/ that is a file likewise. A dangling link already
    there is kept, not written through."""
    code, out = run("examples", "--copy", "/dev/null")
    assert code == 2 and "/dev/null: error: cannot copy the examples: it is not a folder" in out
    target = tmp_path / "specs"
    target.mkdir()
    (target / "kernels").write_text("mine")
    code, out = run("examples", "--copy", str(target))
    assert code == 2 and "kernels: error: cannot copy the examples: it is not a folder" in out
    os.remove(target / "kernels")
    (target / "transpose_naive.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    code, out = run("examples", "--copy", str(target))
    assert code == 0 and not (tmp_path / "elsewhere.yaml").exists()
    assert (target / "kernels" / "matmul.cu").is_file()


def test_unknown_names_are_shown_short() -> None:
    for args in (["examples", "x" * 100_000], ["rules", "x" * 100_000]):
        code, out = run(*args)
        assert code == 2 and "'xxxx" in out
        assert max(len(line) for line in out.splitlines()) < 400


def test_a_config_that_is_a_device_is_named(spec: Path) -> None:
    code, out = run("lint", str(spec), "--config", ZERO)
    assert code == 2
    assert f"{ZERO}: error: cannot read config: it is a character device" in out
