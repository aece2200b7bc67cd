"""Run a launch of the Hopper lab (tests/data/trace/hopper/launches.json), or of another lab
laid out the same way (``folder``), through shmem trace, with the arguments the lab's harness
gave the GPU, and read what it measured."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from shmem_cli.cuda import toolchain
from shmem_cli.cuda.sass_link import link
from shmem_cli.trace.emulator.budget import DEFAULT, Budget
from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.kernel.launch import plan_launch
from shmem_cli.trace.pipeline import LoadedKernel, TraceRequest, load_kernel
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.tracer import trace_kernel

from .conftest import TRACE_DATA
from .trace_util import functions

HOPPER = TRACE_DATA / "hopper"
SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


@functools.cache
def manifest(folder: Path = HOPPER) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "launches.json").read_text())
    return data


@functools.cache
def measured() -> dict[str, dict[str, Any]]:
    data = json.loads((HOPPER / "measured.json").read_text())
    return {m["id"]: m for m in data["launches"]}


def launch(lid: str, folder: Path = HOPPER) -> dict[str, Any]:
    return next(L for L in manifest(folder)["launches"] if L["id"] == lid)


def _map_text(t: dict[str, Any], folder: Path = HOPPER) -> str:
    x = "x".join
    parts = [
        f"dtype={t['dtype'].lower()}",
        f"dims={x(map(str, t['dims']))}",
        f"box={x(map(str, t['box']))}",
        f"elem={x(map(str, t['elem_strides']))}",
        f"swizzle={SWIZZLE[t['swizzle']]}",
    ]
    if t["strides"]:
        parts.append(f"strides={x(map(str, t['strides']))}")
    if "file" in t["buffer"]:
        parts.append(f"data=@{folder / t['buffer']['file']}")
    return "tensormap:" + ",".join(parts)


def arg_texts(lab: dict[str, Any], folder: Path = HOPPER) -> tuple[list[str], dict[int, int]]:
    """The --arg texts, and the buffer each dumped argument position ends up in."""
    args, buffers = [], {}
    k_map = 0
    for i, a in enumerate(lab["args"]):
        if "tensormap" in a:
            args.append(f"{i}={_map_text(a['tensormap'], folder)}")
            buffers[i] = k_map
            k_map += 1
        elif "file" in a:
            args.append(f"{i}=@{folder / a['file']}")
        elif "zeros" in a:
            args.append(f"{i}=@{_zeros(a['zeros'])}")
        elif "struct" in a:  # a struct by value: its fields at their offsets, zeros elsewhere
            for f in a["struct"]["fields"]:
                value = f"@{folder / f['file']}" if "file" in f else f"{f['int']}"
                if "zeros" in f:
                    value = f"@{_zeros(f['zeros'])}"
                args.append(f"{i}+{f['at']}={value}")
        elif "int" in a:  # the bits the host passed: in hexadecimal, which a float takes as
            # bits too (a decimal integer converts, as C++ converts it: 1 -> 1.0)
            bits = a["int"]
            args.append(f"{i}={bits:#x}" if bits >= 0 else f"{i}={bits}")
        else:
            args.append(f"{i}={a['u64']}")
    return args, buffers


def trace_args(lid: str, folder: Path = HOPPER) -> list[str]:
    """``shmem trace``'s arguments for the launch: what :func:`run` traces, for a command
    line (a lab's predict script)."""
    lab = launch(lid, folder)
    dims = ",".join
    out = [str(folder / lab["cubin"]), "-k", lab["kernel"], "--block", dims(map(str, lab["block"]))]
    out += ["--grid", dims(map(str, lab["grid"])), "--dynamic-smem", str(lab["dynamic_smem"])]
    if lab.get("cluster", [1, 1, 1]) != [1, 1, 1]:
        out += ["--cluster", dims(map(str, lab["cluster"]))]
    for text in arg_texts(lab, folder)[0]:
        out += ["--arg", text]
    return out


@functools.cache
def _zeros(n: int) -> str:
    path = Path(tempfile.gettempdir()) / f"shmem-hopper-zeros-{n}.bin"
    if not path.exists() or path.stat().st_size != n:
        path.write_bytes(bytes(n))
    return str(path)


def run(
    lid: str, folder: Path = HOPPER, budget: Budget = DEFAULT, **change: Any
) -> tuple[KernelTrace, dict[int, bytes]]:
    """Trace the launch (within ``budget``); (the trace, {argument position: its buffer's
    bytes after the run})."""
    lab = dict(launch(lid, folder), **change)
    args, maps = arg_texts(lab, folder)
    req = TraceRequest(
        str(folder / lab["cubin"]),
        kernel=lab["kernel"],
        block=tuple(lab["block"]),
        grid=tuple(lab["grid"]),
        args=tuple(args),
        dynamic_smem=lab["dynamic_smem"],
        cluster=tuple(lab["cluster"]) if lab.get("cluster", [1, 1, 1]) != [1, 1, 1] else None,
    )
    loaded = _loaded(lab["cubin"], lab["kernel"], folder)
    plan = plan_launch(
        loaded.kernel,
        loaded.params,
        block=req.block,
        grid=req.grid,
        args=req.args,
        dynamic_smem=req.dynamic_smem,
        cluster=req.cluster,
    )
    memory = GlobalMemory()
    fns = functions(str((folder / lab["cubin"]).relative_to(TRACE_DATA)))
    virtual = [name for _, _, name, _ in loaded.constants.function_slots]  # virtual tables'
    fn = link(fns[loaded.kernel.mangled], fns.get, virtual)  # with the functions it calls (-G)
    kt = trace_kernel(
        fn,
        loaded.kernel,
        loaded.arch,
        plan,
        memory=memory,
        constants=loaded.constants,
        budget=budget,
    )
    out: dict[int, bytes] = {}
    names = {b.param.ordinal: b.param.name or f"param{b.param.ordinal}" for b in plan.buffers}
    for i in lab.get("dumps", []):
        name = f"tensormap{maps[i]}" if i in maps else names[i]
        out[i] = memory.read(name)
    return kt, out


_DISASSEMBLE = toolchain.disassemble


@functools.cache
def _disassembly(path: Path, functions: tuple[int, ...] = ()) -> str:
    return _DISASSEMBLE(path, functions=functions)


@functools.cache
def _loaded(cubin: str, kernel: str, folder: Path = HOPPER) -> LoadedKernel:
    """The kernel's metadata and parameters (each cubin disassembled once)."""
    req = TraceRequest(str(folder / cubin), kernel=kernel, block=(1, 1, 1))
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(toolchain, "disassemble", _disassembly),
    ):
        return load_kernel(req, Path(tmp))


def gpu_output(lid: str, i: int, folder: Path = HOPPER) -> bytes:
    return (folder / "outputs" / f"{lid}.arg{i}.bin").read_bytes()


def per_op(kt: KernelTrace) -> dict[str, tuple[int, int]]:
    totals = kt.to_json()["totals"]
    return {op: (v["requests"], v["wavefronts"]) for op, v in totals.items()}


def as_u32(data: bytes) -> Any:
    return np.frombuffer(data, dtype=np.uint32)
