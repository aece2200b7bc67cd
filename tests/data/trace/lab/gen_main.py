"""Write a CUDA driver-API harness that runs every launch of launches.json from its cubin.

Usage: gen_main.py DATA_DIR CUOBJDUMP OUT.cu. Adds each launch's mangled name to launches.json.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

data = Path(sys.argv[1])  # tests/data/trace
man = json.loads((data / "launches.json").read_text())
nd = sys.argv[2]  # cuobjdump path


def entries(cubin):
    out = subprocess.run([nd, "-elf", str(cubin)], capture_output=True, text=True).stdout
    names = sorted(set(re.findall(r"FUNC\s+GLOBAL\s+DEFAULT\s+ENTRY\s+\S+\s+(\S+)", out)))
    dem = subprocess.run(
        ["c++filt"], input="\n".join(names), capture_output=True, text=True
    ).stdout.split("\n")
    res = {}
    for m, d in zip(names, dem, strict=False):
        d = d.removeprefix("void ")
        d = d[: d.index("(")] if "(" in d else d
        # c++filt: the kernel's parameter list starts at the last '(' at depth 0
        res[d] = m
    return res


cache = {}
body = []
for L in man["launches"]:
    cub = data / L.get("cubin", Path(L["source"]).stem + ".sm_90.cubin")
    if "mangled" in L:  # given (names kept with the launches)
        mangled = L["mangled"]
    else:
        if cub not in cache:
            cache[cub] = entries(cub)
        # an extern "C" kernel keeps its name (cuobjdump's symbol table layout varies by version)
        mangled = cache[cub].get(L["kernel"], L["kernel"])
    L["mangled"] = mangled
    lines = [f"  {{ // {L['id']}", f'    CUfunction f = get(mod("{cub.name}"), "{mangled}");']
    params = []
    for i, a in enumerate(L["args"]):
        if isinstance(a, dict):
            if "zeros" in a:
                lines.append(f"    CUdeviceptr p{i} = buffer({a['zeros']}, nullptr);")
            else:
                lines.append(f'    CUdeviceptr p{i} = buffer(0, "{a["file"]}");')
        else:
            lines.append(f"    int p{i} = {int(a)};")
        params.append(f"&p{i}")
    for sym, file in L.get("const", {}).items():  # __constant__ data the host sets
        lines.append(f'    setconst(mod("{cub.name}"), "{sym}", "{file}");')
    lines.append(f"    void *args[] = {{{', '.join(params)}}};")
    g, b = L["grid"], L["block"]
    lines.append(
        f"    CK(cuLaunchKernel(f, {g[0]}, {g[1]}, {g[2]}, {b[0]}, {b[1]}, {b[2]}, "
        f"{L['dynamic_smem']}, 0, args, 0));"
    )
    lines.append("    CK(cuCtxSynchronize());")
    z = L["args"][0]["zeros"]
    lines.append(f'    dump(p0, {z}, "{L["id"]}");')
    lines.append("  }")
    body.append("\n".join(lines))
(data / "launches.json").write_text(json.dumps(man, indent=1))
src = (
    r"""
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <map>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; \
    cuGetErrorString(r_, &s); printf("CUDA error %s at line %d\n", s, __LINE__); exit(1);} \
  } while (0)
static std::string DATA, OUTD;
static std::map<std::string, CUmodule> mods;
static CUmodule mod(const char *name) {
  auto it = mods.find(name); if (it != mods.end()) return it->second;
  CUmodule m; CK(cuModuleLoad(&m, (DATA + "/" + name).c_str())); mods[name] = m; return m; }
static CUfunction get(CUmodule m, const char *n) {
  CUfunction f; CK(cuModuleGetFunction(&f, m, n)); return f; }
static CUdeviceptr buffer(size_t bytes, const char *file) {
  std::vector<char> h;
  if (file) {
    FILE *fp = fopen((DATA + "/" + file).c_str(), "rb");
    if (!fp) { printf("no %s\n", file); exit(1);}
    fseek(fp, 0, SEEK_END); long n = ftell(fp); fseek(fp, 0, SEEK_SET);
    h.resize(n); fread(h.data(), 1, n, fp); fclose(fp); }
  else h.assign(bytes, 0);
  CUdeviceptr d; CK(cuMemAlloc(&d, h.size() + 256)); CK(cuMemsetD8(d, 0, h.size() + 256));
  CK(cuMemcpyHtoD(d, h.data(), h.size())); return d; }
static void setconst(CUmodule m, const char *sym, const char *file) {
  FILE *fp = fopen((DATA + "/" + file).c_str(), "rb");
  if (!fp) { printf("no %s\n", file); exit(1);}
  std::vector<char> h(1 << 16); size_t n = fread(h.data(), 1, h.size(), fp); fclose(fp);
  CUdeviceptr g; size_t size; CK(cuModuleGetGlobal(&g, &size, m, sym));
  if (n > size) { printf("%s: %zu bytes > %zu\n", file, n, size); exit(1);}
  CK(cuMemcpyHtoD(g, h.data(), n)); }
static void dump(CUdeviceptr d, size_t n, const char *id) {
  std::vector<char> h(n); CK(cuMemcpyDtoH(h.data(), d, n));
  FILE *fp = fopen((OUTD + "/" + id + ".bin").c_str(), "wb");
  fwrite(h.data(), 1, n, fp); fclose(fp); }
int main(int argc, char **argv) {
  DATA = argv[1]; OUTD = argv[2];
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuCtxCreate(&ctx, NULL, 0, dev));
"""
    + "\n".join(body)
    + r"""
  printf("all done\n"); return 0; }
"""
)
Path(sys.argv[3]).write_text(src)
print("launches", len(man["launches"]))
