"""Write a CUDA driver-API harness that runs every launch of tests/data/triton/launches.json.

Usage: gen_main.py DATA_DIR OUT.cu. Each launch loads its cache entry's cubin, as Triton's
launcher would: block num_warps * 32, dynamic shared memory = the metadata's `shared`, the
parameters of the TTGIR signature (pointers: zero-filled buffers of 1 MiB, scalars from the
launch), then Triton's hidden scratch pointers (null: every entry's scratch sizes are 0).
"""

import json
import re
import sys
from pathlib import Path

data = Path(sys.argv[1])
man = json.loads((data / "launches.json").read_text())
ARG = re.compile(r"%(\w+): ([^ {]+(?:<[^>]*>)?)")
body = []
for L in man["launches"]:
    entry = data / L["entry"]
    meta = json.loads((entry / f"{L['kernel']}.json").read_text())
    ttgir = (entry / f"{L['kernel']}.ttgir").read_text()
    head = ttgir[ttgir.index(f"tt.func public @{L['kernel']}(") :]
    head = head[: head.index(" attributes")]
    lines = [
        f"  {{ // {L['id']}",
        f'    CUfunction f = get("{L["entry"]}/{L["kernel"]}.cubin", "{meta["name"]}");',
    ]
    params = []
    for i, (name, ty) in enumerate(ARG.findall(head)):
        if ty.startswith("!tt.ptr"):
            lines.append(f"    CUdeviceptr p{i} = buffer(1 << 20);")
        elif ty == "i32":
            lines.append(f"    int p{i} = {int(L['args'][name])};")
        elif ty == "f32":
            lines.append(f"    float p{i} = {float(L['args'][name])!r}f;")
        else:
            raise SystemExit(f"{L['id']}: parameter {name} of type {ty}")
        params.append(f"&p{i}")
    for k in range(2):  # global and profile scratch
        assert meta.get(["global_scratch_size", "profile_scratch_size"][k], 0) == 0
        lines.append(f"    CUdeviceptr s{k} = 0;")
        params.append(f"&s{k}")
    lines.append(f"    void *args[] = {{{', '.join(params)}}};")
    g = L["grid"]
    smem = meta["shared"]
    lines.append(
        f"    CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, {smem}));"
    )
    lines.append(
        f"    CK(cuLaunchKernel(f, {g[0]}, {g[1]}, {g[2]}, {32 * meta['num_warps']}, 1, 1, "
        f"{smem}, 0, args, 0));"
    )
    lines.append("    CK(cuCtxSynchronize());")
    lines.append("  }")
    body.append("\n".join(lines))
src = (
    r"""
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; \
    cuGetErrorString(r_, &s); printf("CUDA error %s at line %d\n", s, __LINE__); exit(1);} \
  } while (0)
static std::string DATA;
static CUfunction get(const char *cubin, const char *n) {
  CUmodule m; CK(cuModuleLoad(&m, (DATA + "/" + cubin).c_str()));
  CUfunction f; CK(cuModuleGetFunction(&f, m, n)); return f; }
static CUdeviceptr buffer(size_t bytes) {
  CUdeviceptr d; CK(cuMemAlloc(&d, bytes)); CK(cuMemsetD8(d, 0, bytes)); return d; }
int main(int argc, char **argv) {
  DATA = argv[1];
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuCtxCreate(&ctx, NULL, 0, dev));
"""
    + "\n".join(body)
    + r"""
  printf("all done\n"); return 0; }
"""
)
Path(sys.argv[2]).write_text(src)
print("launches", len(man["launches"]))
