"""The opt-in build cache of ``.cu`` compiles (``--build-cache DIR``, ``[tool.shmem]
build-cache``; shmem_cli/cuda/build_cache.py): a second trace of an unchanged build takes the
cubin without nvcc and reports the same; an edited header, a changed nvcc argument, a damaged
or foreign entry miss (and the entry is written again); the files a cached build read are
checked against the folders allowed now; the folder stays within its bounds."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import build, build_cache, toolchain
from shmem_cli.cuda.build import Build, compile_checked
from shmem_cli.cuda.build_cache import FORMAT, BuildCache, Cached, lookup, open_cache, store
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.pipeline import TraceRequest, trace_file

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

#: shmem's own header library and the kernel that uses it (tests/test_trace_frontdoor_measured)
KERNELS = TRACE_DATA / "frontdoor" / "kernels"
SWIZZLED = "tile_columns<tile::Swizzled"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository holding a copy of tile_columns.cu and its header library."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".git").mkdir()
    shutil.copy(KERNELS / "tile_columns.cu", proj / "tile_columns.cu")
    shutil.copytree(KERNELS / "include", proj / "include")
    return proj


def _trace(proj: Path, cache: Path | None, *more: str, fmt: str = "json") -> str:
    words = [
        "trace", str(proj / "tile_columns.cu"), "-k", SWIZZLED, "-b", "128", "--no-tables",
        f"--nvcc-arg=-I{proj / 'include'}", "--nvcc-arg=-std=c++17", "--format", fmt, *more,
    ]  # fmt: skip
    if cache is not None:
        words += ["--build-cache", str(cache)]
    res = CliRunner().invoke(main, words)
    assert res.exit_code == 0, res.output
    return res.output


def _kernel(text: str) -> dict[str, Any]:
    kernel: dict[str, Any] = json.loads(text)["files"][0]["kernels"][0]
    return kernel


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_a_second_trace_takes_the_build_from_the_cache(
    project: Path, compiles: list[str], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = _kernel(_trace(project, cache))
    assert compiles == ["sm_90"] and cache.is_dir()
    second = _kernel(_trace(project, cache))
    assert compiles == ["sm_90"]  # no nvcc the second time
    assert (first.pop("build_cached"), second.pop("build_cached")) == (False, True)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    text = _trace(project, cache, fmt="text")
    assert f"build: cached ({cache.resolve()})" in text
    listed = CliRunner().invoke(
        main,
        ["trace", str(project / "tile_columns.cu"), "--list-params", "--build-cache", str(cache),
         f"--nvcc-arg=-I{project / 'include'}", "--nvcc-arg=-std=c++17"],
    )  # fmt: skip
    assert listed.exit_code == 0, listed.output
    assert "2 kernels" in listed.output and compiles == ["sm_90"]
    # without the option nothing is read from the cache, nor written anywhere
    before = sorted(os.listdir(cache))
    assert _kernel(_trace(project, None))["build_cached"] is False
    assert compiles == ["sm_90", "sm_90"] and sorted(os.listdir(cache)) == before


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_an_edited_header_misses(project: Path, compiles: list[str], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _trace(project, cache, "--arch", "sm_80")
    layout = project / "include" / "tile" / "layout.hpp"
    layout.write_text(layout.read_text() + "\n// edited\n")
    assert _kernel(_trace(project, cache, "--arch", "sm_80"))["build_cached"] is False
    assert compiles == ["sm_80", "sm_80"]
    assert _kernel(_trace(project, cache, "--arch", "sm_80"))["build_cached"] is True
    assert compiles == ["sm_80", "sm_80"]


@pytest.mark.slow  # 2-7 s; the cache's other tests stay fast
@needs_nvcc
@needs_nvdisasm
def test_a_cached_build_is_refused_where_a_fresh_one_is(
    tmp_path: Path, compiles: list[str]
) -> None:
    """A computed include reaches a header outside the repository: allowed while the source
    roots hold it, refused on a hit as the fresh build refuses it once they do not."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "v.h").write_text("#define VALUE 3\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".git").mkdir()
    src = proj / "k.cu"
    src.write_text(
        '#define HEADER "../lib/v.h"\n#include HEADER\n'
        "__global__ void k(float *o) {\n  __shared__ float s[64];\n"
        "  s[threadIdx.x] = VALUE;\n  __syncthreads();\n"
        "  o[threadIdx.x] = s[63 - threadIdx.x];\n}\n"
    )
    cache = str(tmp_path / "cache")
    wide = TraceRequest(src, block=(32, 1, 1), source_roots=(str(tmp_path),), build_cache=cache)
    assert trace_file(wide).kernels[0].cached is None
    assert trace_file(wide).kernels[0].cached == str(Path(cache).resolve())
    narrow = TraceRequest(src, block=(32, 1, 1))
    with pytest.raises(ShmemError) as fresh:
        trace_file(narrow)
    assert "the build read" in fresh.value.message and "v.h" in fresh.value.message
    with pytest.raises(ShmemError) as hit:
        trace_file(TraceRequest(src, block=(32, 1, 1), build_cache=cache))
    assert (hit.value.message, hit.value.code) == (fresh.value.message, fresh.value.code)
    # the wide build, the fresh narrow one, and the narrow one with the cache: its entry read
    # v.h, outside the roots now, so it is no hit (v.h is not read) and its build is refused
    assert compiles == ["sm_90", "sm_90", "sm_90"]


# --- the cache's own rules, on builds made up here (no nvcc) -----------------------------------


def _made(tmp_path: Path, name: str = "a", body: bytes = b"\x7fELF cubin") -> Cached:
    """A build of a made-up cubin that read one header."""
    folder = tmp_path / f"built-{name}"
    folder.mkdir()
    header = folder / "h.hpp"
    header.write_text(f"// {name}\n")
    cubin = folder / "kernel.cubin"
    cubin.write_bytes(body)
    return Cached(cubin, "sm_90", f"note {name}", (str(header),), f"sass of {name}")


def _anywhere(_: Path) -> bool:
    """Every file a build may read (the folders' rule is the caller's: build.compile_checked)."""
    return True


def _key(n: int) -> str:
    return f"{n:064x}"


def test_an_entry_is_found_while_its_files_are_unchanged(tmp_path: Path) -> None:
    cache = open_cache(tmp_path / "cache")
    made = _made(tmp_path)
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is None
    assert store(cache, _key(1), made, started_ns=0) is False  # the header is newer: not kept
    assert store(cache, _key(1), made, started_ns=1 << 62)
    got = lookup(cache, _key(1), tmp_path / "out", _anywhere)
    assert got is not None
    assert (got.arch, got.note, got.files, got.sass) == ("sm_90", "note a", made.files, "sass of a")
    assert got.cubin == tmp_path / "out" / "kernel.cubin"
    assert got.cubin.read_bytes() == b"\x7fELF cubin"
    Path(made.files[0]).write_text("// a, edited\n")
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder, key: (folder / f"{key}.cubin").write_bytes(b"\x7fELF cub"),  # truncated
        lambda folder, key: (folder / f"{key}.cubin").unlink(),
        lambda folder, key: (folder / f"{key}.sass").write_text("other"),
        lambda folder, key: (folder / f"{key}.json").write_text('{"format": 1, "key": '),
        lambda folder, key: (folder / f"{key}.json").write_text("[]"),
        lambda folder, key: (folder / f"{key}.json").write_text(
            (folder / f"{key}.json").read_text().replace('"sm_90"', "90")
        ),
        lambda folder, key: (folder / f"{key}.json").write_text(
            (folder / f"{key}.json").read_text().replace(f'"format": {FORMAT}', '"format": 99')
        ),
        lambda folder, key: (folder / f"{key}.json").write_text(
            (folder / f"{key}.json").read_text().replace("h.hpp", "h\\u0000.hpp")
        ),
        lambda folder, key: (folder / f"{key}.json").write_text(
            (folder / f"{key}.json").read_text().replace("h.hpp", "h\\ud800.hpp")
        ),
    ],
    ids=[
        *("truncated-cubin", "no-cubin", "other-sass", "cut-manifest", "list", "bad-arch"),
        *("format", "nul-in-a-file-name", "unencodable-file-name"),
    ],
)
def test_a_damaged_entry_is_a_miss(tmp_path: Path, damage: Callable[[Path, str], Any]) -> None:
    cache = open_cache(tmp_path / "cache")
    assert store(cache, _key(1), _made(tmp_path), started_ns=1 << 62)
    damage(cache.folder, _key(1))
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is None


def test_a_foreign_a_linked_or_an_oversized_entry_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = open_cache(tmp_path / "cache")
    assert store(cache, _key(1), _made(tmp_path), started_ns=1 << 62)
    for suffix in ("json", "cubin", "sass"):  # another key's files under this key's names
        shutil.copy(cache.folder / f"{_key(1)}.{suffix}", cache.folder / f"{_key(2)}.{suffix}")
    assert lookup(cache, _key(2), tmp_path / "out", _anywhere) is None
    outside = tmp_path / "outside.json"  # a link out of the folder is never followed
    shutil.move(cache.folder / f"{_key(1)}.json", outside)
    (cache.folder / f"{_key(1)}.json").symlink_to(outside)
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is None
    os.replace(outside, cache.folder / f"{_key(1)}.json")
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is not None
    monkeypatch.setattr(build_cache, "MAX_MANIFEST_BYTES", 100)
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is None


def test_a_build_that_read_too_much_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = open_cache(tmp_path / "cache")
    monkeypatch.setattr(build_cache, "MAX_HASHED_BYTES", 4)
    assert store(cache, _key(1), _made(tmp_path), started_ns=1 << 62) is False
    assert not cache.folder.exists()  # nothing kept: the folder is not even made


def test_the_least_recently_used_entries_go_past_the_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_cache, "MAX_ENTRIES", 3)
    (tmp_path / "cache").mkdir()
    cache = open_cache(tmp_path / "cache")
    assert cache.max_entries == 3
    (cache.folder / "notes.txt").write_text("not the cache's")  # never touched
    for n in range(1, 4):
        assert store(cache, _key(n), _made(tmp_path, str(n)), started_ns=1 << 62)
        os.utime(cache.folder / f"{_key(n)}.json", ns=(n * 10**9, n * 10**9))
    # used: now the most recent
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is not None
    assert store(cache, _key(4), _made(tmp_path, "4"), started_ns=1 << 62)
    kept = {name.split(".")[0] for name in os.listdir(cache.folder)}
    assert kept == {_key(1), _key(3), _key(4), "notes"}
    # the bytes bound: a 1.5 KB cubin and the bound at 2 KB leave only the newest entry
    small = BuildCache(cache.folder, max_entries=64, max_bytes=2000)
    assert store(small, _key(5), _made(tmp_path, "5", body=b"\x7fELF" + bytes(1500)), 1 << 62)
    assert {name.split(".")[0] for name in os.listdir(cache.folder)} == {_key(5), "notes"}
    assert sum(p.stat().st_size for p in cache.folder.glob(f"{_key(5)}.*")) <= 2000


def test_the_cache_folder_is_made_by_the_first_entry_kept_never_its_parents(
    tmp_path: Path,
) -> None:
    cache = open_cache(tmp_path / "c")
    assert cache.folder == (tmp_path / "c").resolve() and not cache.folder.exists()
    assert lookup(cache, _key(1), tmp_path / "out", _anywhere) is None and not cache.folder.exists()
    assert store(cache, _key(1), _made(tmp_path), started_ns=1 << 62)
    assert sorted(os.listdir(cache.folder)) == [f"{_key(1)}.{s}" for s in ("cubin", "json", "sass")]
    with pytest.raises(ShmemError, match="its parent folder does not exist"):
        open_cache(tmp_path / "no" / "c")
    (tmp_path / "f").write_text("")
    with pytest.raises(ShmemError, match="is not a folder"):
        open_cache(tmp_path / "f")
    res = CliRunner().invoke(
        main, ["trace", str(KERNELS / "tile_columns.cu"), "-b", "128",
               "--build-cache", str(tmp_path / "no" / "c")],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "its parent folder does not exist" in res.output
    assert "make the parent folder" in res.output and str(tmp_path / "no" / "c") in res.output
    assert "Traceback" not in res.output and not (tmp_path / "no").exists()


def test_a_cubin_traced_with_a_build_cache_creates_no_folder(tmp_path: Path) -> None:
    """Nothing to build, nothing kept: the folder named is checked but not made."""
    from shmem_cli.trace import api

    cubin = TRACE_DATA / "column_read.sm_90.cubin"
    res = CliRunner().invoke(
        main, ["trace", str(cubin), "-b", "32", "--build-cache", str(tmp_path / "c"), "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    assert _kernel(res.output)["build_cached"] is False
    api.trace(cubin, block=32, build_cache=tmp_path / "d")
    assert os.listdir(tmp_path) == []


@needs_nvcc
def test_a_damaged_entry_is_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through :func:`compile_checked` (the compile itself made up): a hit costs no build, a
    truncated cubin or a cut manifest one build that writes the entry again."""
    made = _made(tmp_path)
    source = Path(made.files[0]).with_name("k.cu")
    source.write_text("// the source\n")
    builds: list[str] = []

    def choose(src: Path, arch: str | None, *rest: Any) -> Build:
        builds.append(arch or "")
        return Build(made.cubin, made.arch, made.note, made.files, made.sass)

    monkeypatch.setattr(build, "_choose", choose)
    cache = tmp_path / "cache"

    def run(args: Sequence[str] = ()) -> Build:
        return compile_checked(
            source, None, "sm_90", tmp_path / "work", args, allowed=lambda _: True,
            cache=str(cache),
        )  # fmt: skip

    assert run().cached is None and run().cached == str(cache.resolve())
    assert len(builds) == 1
    (key,) = {name.split(".")[0] for name in os.listdir(cache)}
    (cache / f"{key}.cubin").write_bytes(b"\x7fE")
    assert run().cached is None and run().cached is not None
    (cache / f"{key}.json").write_text("{")
    assert run().cached is None and run().cached is not None
    assert len(builds) == 3
    assert run(["-DX=1"]).cached is None and len(builds) == 4  # another argument: another key
    # an entry that read a file outside the folders allowed now is no hit, and that file is
    # not read (a manifest cannot make shmem read outside them): the source is built again
    hashed: list[str] = []
    hash_file = build_cache._hash_file

    def spy(name: str, left: int) -> Any:
        hashed.append(name)
        return hash_file(name, left)

    monkeypatch.setattr(build_cache, "_hash_file", spy)
    outside = lambda p: p.name != "h.hpp"  # noqa: E731
    assert lookup(open_cache(str(cache)), key, tmp_path / "out", outside) is None
    assert hashed == []
    assert lookup(open_cache(str(cache)), key, tmp_path / "out", _anywhere) is not None
    assert any(h.endswith("h.hpp") for h in hashed)  # the spy sees what a hit reads
    got = compile_checked(
        source, None, "sm_90", tmp_path / "work", (), allowed=outside, cache=str(cache)
    )
    assert got.cached is None and len(builds) == 5


def test_the_project_config_names_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmem_cli.commands.trace import build_cache_folder
    from shmem_cli.lint.config import load_config

    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.shmem]\nbuild-cache = ".shmem-build"\n')
    config = load_config(tmp_path / "pyproject.toml")
    assert config.build_cache == str((tmp_path / ".shmem-build").resolve())
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # relative to the pyproject's folder, not the current
    assert build_cache_folder(None) == str((tmp_path / ".shmem-build").resolve())
    assert not (tmp_path / ".shmem-build").exists()  # made by the first build kept
    assert build_cache_folder(str(tmp_path / "given")) == str((tmp_path / "given").resolve())
    (tmp_path / "pyproject.toml").write_text("[tool.shmem]\nbuild-cache = 3\n")
    with pytest.raises(ShmemError, match="build-cache must be a folder name"):
        load_config(tmp_path / "pyproject.toml")


def test_a_configured_cache_that_cannot_be_made_is_one_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[tool.shmem] build-cache`` under a missing folder: ``shmem lint`` (of a spec whose
    kernel is a .cu) and ``shmem trace`` stop at the key, exit status 2, before any build;
    not each kernel reported untraced."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    shutil.copy(TRACE_DATA.parent / "compiled_specs" / "kernels" / "row_scale.cu", proj)
    spec = (TRACE_DATA.parent / "compiled_specs" / "row_scale_v1.yaml").read_text()
    (proj / "spec.yaml").write_text(
        spec.replace("source: kernels/row_scale.sm_90.cubin", "source: row_scale.cu")
    )
    (proj / "pyproject.toml").write_text(
        '[tool.shmem]\npaths = ["spec.yaml"]\nbuild-cache = "no/such/.shmem-build"\n'
    )
    monkeypatch.chdir(proj)
    for words in (["lint"], ["trace", "row_scale.cu", "-b", "32,8"]):
        res = CliRunner().invoke(main, words)
        assert res.exit_code == 2, res.output
        out = " ".join(res.output.split())
        where, _, said = out.partition(": error: ")
        assert Path(where) in (Path("pyproject.toml:3:1"), proj / "pyproject.toml:3:1"), out
        assert said.startswith("[tool.shmem] build-cache 'no/such/.shmem-build' "), out
        assert "its parent folder does not exist" in out
        assert "make the parent folder, or name a folder whose parent exists" in out
        assert "SH008" not in out and "Traceback" not in out
    assert sorted(os.listdir(proj)) == [".git", "pyproject.toml", "row_scale.cu", "spec.yaml"]


@pytest.mark.slow  # 3 s; the cache's other tests stay fast
@needs_nvcc
@needs_nvdisasm
def test_a_kernel_sweep_goes_through_the_named_cache(
    project: Path, compiles: list[str], tmp_path: Path
) -> None:
    """``shmem sweep KERNEL.cu --define ... --build-cache DIR``: every variant's build kept
    there, none compiled again."""
    cache = tmp_path / "cache"
    words = [
        "sweep", str(project / "tile_columns.cu"), "--define", "PAD=0,1", "-k", SWIZZLED,
        "-b", "128", "--arch", "sm_80", f"--nvcc-arg=-I{project / 'include'}",
        "--nvcc-arg=-std=c++17", "--build-cache", str(cache), "-f", "json",
    ]  # fmt: skip
    first = CliRunner().invoke(main, words)
    assert first.exit_code == 0, first.output
    assert compiles == ["sm_80", "sm_80"]
    assert len(list(cache.glob("*.json"))) == 2
    again = CliRunner().invoke(main, words)
    assert again.exit_code == 0, again.output
    assert compiles == ["sm_80", "sm_80"]
    assert json.loads(again.output)["variants"] == json.loads(first.output)["variants"]


@pytest.mark.slow  # 10-11 s; the cache's other tests stay fast
@needs_nvcc
@needs_nvdisasm
def test_a_suggested_sweep_keeps_its_builds_where_the_trace_did(tmp_path: Path) -> None:
    """``--suggest`` with ``--build-cache``: the ``shmem sweep`` command it names keeps the
    variants' builds in the same folder."""
    source = TRACE_DATA / "fixes" / "kernels" / "warp_sgemm.cu"
    cache = str(tmp_path / "cache")
    words = ["trace", str(source), "-b", "256", "-a", "M=64", "-a", "N=128", "-a", "K=64"]
    words += ["--nvcc-arg=-DPAD=0", "--arch", "sm_90", "--suggest", "--build-cache", cache]
    res = CliRunner().invoke(main, [*words, "--format", "json"])
    assert res.exit_code == 0, res.output
    kernel = _kernel(res.output)
    sweeps = {s["sweep"] for s in kernel["suggestions"] if s.get("sweep")}
    assert sweeps and all(s.endswith(f"--build-cache {cache}") for s in sweeps), sweeps


def test_the_key_changes_with_each_thing_that_decides_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a stand-in nvcc and host compiler (files only: their identity is path, size and time)
    tools = {name: tmp_path / name for name in ("nvcc", "g++")}
    for name, path in tools.items():
        path.write_text(f"# {name}\n")
    found = {name: str(path) for name, path in tools.items()}
    monkeypatch.setattr(toolchain, "which", found.get)
    monkeypatch.setattr(build_cache, "_version", lambda *_: "release 13.0")
    for name in build_cache._ENV:
        monkeypatch.delenv(name, raising=False)
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k() {}\n")

    def key(arch: str | None = None, default: str = "sm_90", args: Sequence[str] = ()) -> str:
        got = build_cache.key_of(source, arch, default, args)
        assert got is not None and len(got) == 64
        return got

    base = key()
    assert key() == base  # nothing changed: the same entry
    changed = {
        "arch": key(arch="sm_90"),
        "default": key(default="sm_80"),
        "args": key(args=["-DTILE=64"]),
        "args order": key(args=["-O3", "-DTILE=64"]) != key(args=["-DTILE=64", "-O3"]),
    }
    assert changed.pop("args order") is True
    for env in ("NVCC_APPEND_FLAGS", "CPATH", "CPLUS_INCLUDE_PATH"):
        monkeypatch.setenv(env, str(tmp_path))
        changed[env] = key()
        monkeypatch.delenv(env)
    source.write_text("__global__ void k() { }\n")
    changed["source"] = key()
    source.write_text("__global__ void k() {}\n")
    tools["nvcc"].write_text("# nvcc, another release\n")
    changed["nvcc"] = key()
    assert key(args=["-DTILE=64"]) != changed["args"]  # (the nvcc changed since)
    tools["nvcc"].write_text("# nvcc\n")
    os.utime(tools["nvcc"], ns=(1, 1))
    changed["nvcc time"] = key()
    assert all(k != base for k in changed.values()), changed
    assert len(set(changed.values())) == len(changed)
