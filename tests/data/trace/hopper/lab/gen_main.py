"""Write the driver-API harness that runs every launch of ../launches.json from its cubin.

Arguments: {"file": F} or {"zeros": N} a global buffer; {"int": v} a 4-byte int; {"u64": v};
{"struct": {"size": S, "fields": [{"at": OFFSET, ...}, ...]}} S bytes passed by value, zeros
but for its fields (each a buffer's pointer, "file" or "zeros", or an "int" at byte OFFSET);
{"tensormap": {...}} a CUtensorMap encoded with cuTensorMapEncodeTiled over its own buffer (the
parameter gets the 128 bytes). Launches with a cluster other than 1x1x1 use cuLaunchKernelEx
with a cluster-dimension attribute. After each launch the buffers of the argument positions in
"dumps" (a tensor map: its buffer) are written to OUT/ID.argK.bin, and every tensor map's 128
bytes to OUT/ID.tmapK.bin; each of "encodings" is encoded over one buffer and written to
OUT/enc_ID.bin (its address in OUT/enc_base.txt).
Usage: python3 gen_main.py OUT.cu; then harness DATA OUTDIR|- [FIRST LAST+1]
"""

import json
import os
import sys
from pathlib import Path

# the lab folder: ../ by default, or $LAB_DATA (another lab laid out the same way)
HERE = Path(os.environ.get("LAB_DATA") or Path(__file__).resolve().parent.parent)
man = json.loads((HERE / "launches.json").read_text())
DT = {
    "UINT8": 0,
    "UINT16": 1,
    "UINT32": 2,
    "INT32": 3,
    "UINT64": 4,
    "INT64": 5,
    "FLOAT16": 6,
    "FLOAT32": 7,
    "FLOAT64": 8,
    "BFLOAT16": 9,
    "FLOAT32_FTZ": 10,
    "TFLOAT32": 11,
    "TFLOAT32_FTZ": 12,
}
ESIZE = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}


def buf(spec, var):
    if "file" in spec:
        return f'    CUdeviceptr {var} = buffer(0, "{spec["file"]}");'
    return f"    CUdeviceptr {var} = buffer({spec['zeros']}, nullptr);"


def encode(var, ptr, t):
    rank = len(t["dims"])
    dims = ", ".join(f"{d}ull" for d in t["dims"])
    strides = ", ".join(f"{s}ull" for s in t["strides"]) or "0ull"
    box = ", ".join(str(b) for b in t["box"])
    el = ", ".join(str(e) for e in t["elem_strides"])
    return (
        f"    CUtensorMap {var}; {{ cuuint64_t d[] = {{{dims}}}; cuuint64_t s[] = {{{strides}}};"
        f" cuuint32_t b[] = {{{box}}}; cuuint32_t e[] = {{{el}}};\n"
        f"      CK(cuTensorMapEncodeTiled(&{var}, (CUtensorMapDataType){DT[t['dtype']]}, {rank},"
        f" (void *){ptr}, d, s, b, e, (CUtensorMapInterleave){t['interleave']},"
        f" (CUtensorMapSwizzle){t['swizzle']}, (CUtensorMapL2promotion){t['l2']},"
        f" (CUtensorMapFloatOOBfill){t['oob']})); }}"
    )


def struct_lines(s, var):
    """A struct passed by value: its bytes, zeros but for the fields (pointers and ints)."""
    lines = [f"    alignas(16) unsigned char {var}[{int(s['size'])}] = {{0}};"]
    for k, f in enumerate(s["fields"]):
        at = int(f["at"])
        if "file" in f or "zeros" in f:
            lines.append(buf(f, f"{var}_{k}"))
            lines.append(f"    memcpy({var} + {at}, &{var}_{k}, 8);")
        else:
            lines.append(f"    {{ int v = {int(f['int'])}; memcpy({var} + {at}, &v, 4); }}")
    return lines


body = []
for k, L in enumerate(man["launches"]):
    lid = L["id"]
    lines = [
        f"  if ({k} >= LO && {k} < HI) {{ // {lid}",
        f'    CUfunction f = get(mod("{L["cubin"]}"), "{L["kernel"]}");',
    ]
    lines.append(
        f"    CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "
        f"{max(L['dynamic_smem'], 0)}));"
    )
    ptrs, post = [], []
    for i, a in enumerate(L["args"]):
        if "tensormap" in a:
            t = a["tensormap"]
            lines.append(buf(t["buffer"], f"q{i}"))
            lines.append(encode(f"p{i}", f"q{i}", t))
            post.append(f'    dump_host(&p{i}, 128, "{lid}.tmap{i}");')
            if i in L.get("dumps", []):
                n = t["dims"][0] * ESIZE[DT[t["dtype"]]]
                for d in t["dims"][1:]:
                    n *= d
                post.append(f'    dump(q{i}, {n}, "{lid}.arg{i}");')
        elif "file" in a or "zeros" in a:
            lines.append(buf(a, f"p{i}"))
            if i in L.get("dumps", []):
                post.append(f'    dump(p{i}, size_of(p{i}), "{lid}.arg{i}");')
        elif "struct" in a:
            lines += struct_lines(a["struct"], f"p{i}")
        elif "int" in a:
            lines.append(f"    int p{i} = {int(a['int'])};")
        else:
            lines.append(f"    unsigned long long p{i} = {int(a['u64'])}ull;")
        ptrs.append(f"&p{i}")
    lines.append(f"    void *args[] = {{{', '.join(ptrs)}}};")
    g, b, c = L["grid"], L["block"], L.get("cluster", [1, 1, 1])
    lines.append(
        f"    launch(f, {g[0]}, {g[1]}, {g[2]}, {b[0]}, {b[1]}, {b[2]}, {c[0]}, {c[1]}, {c[2]}, "
        f'{L["dynamic_smem"]}, args, "{lid}");'
    )
    lines += post
    lines.append("    release();")
    lines.append("  }")
    body.append("\n".join(lines))

enc = [
    "  { CUdeviceptr q = buffer(1 << 24, nullptr);",
    '    FILE *fp = fopen((OUTD + "/enc_base.txt").c_str(), "w");'
    ' fprintf(fp, "%llu\\n", (unsigned long long)q); fclose(fp);',
]
for e in man.get("encodings", []):
    t = dict(e, elem_strides=e["elem"])
    code = encode("m", "q", t).replace("CUtensorMap m;", "{ CUtensorMap m;")
    code = code.replace("CK(cuTensorMapEncodeTiled(", "CUresult r = (cuTensorMapEncodeTiled(")
    enc.append(code.replace(")); }", "));"))  # an encoding the driver refuses is noted, not fatal
    enc.append(f'      if (r == CUDA_SUCCESS) dump_host(&m, 128, "enc_{e["id"]}");')
    enc.append(f'      else printf("encoding {e["id"]} refused: %d\\n", (int)r); }} }}')
enc.append("  }")

src = (
    r"""
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <map>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; \
    cuGetErrorString(r_, &s); printf("CUDA error %s at line %d\n", s, __LINE__); exit(1);} \
  } while (0)
static std::string DATA, OUTD;
static std::map<std::string, CUmodule> mods;
static std::map<CUdeviceptr, size_t> sizes;
static std::vector<CUdeviceptr> live;
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
    h.resize(n); if (fread(h.data(), 1, n, fp) != (size_t)n) exit(1); fclose(fp); }
  else h.assign(bytes, 0);
  CUdeviceptr d; CK(cuMemAlloc(&d, h.size() + 1024)); CK(cuMemsetD8(d, 0, h.size() + 1024));
  CK(cuMemcpyHtoD(d, h.data(), h.size())); sizes[d] = h.size(); live.push_back(d); return d; }
static size_t size_of(CUdeviceptr d) { return sizes[d]; }
static void release() { for (auto d : live) cuMemFree(d); live.clear(); }
static void dump_host(const void *p, size_t n, const char *id) {
  FILE *fp = fopen((OUTD + "/" + id + ".bin").c_str(), "wb");
  fwrite(p, 1, n, fp); fclose(fp); }
static void dump(CUdeviceptr d, size_t n, const char *id) {
  if (OUTD.empty()) return;
  std::vector<char> h(n); CK(cuMemcpyDtoH(h.data(), d, n)); dump_host(h.data(), n, id); }
static void launch(CUfunction f, int gx, int gy, int gz, int bx, int by, int bz, int cx, int cy,
                   int cz, int smem, void **args, const char *id) {
  CUlaunchConfig cfg = {}; cfg.gridDimX = gx; cfg.gridDimY = gy; cfg.gridDimZ = gz;
  cfg.blockDimX = bx; cfg.blockDimY = by; cfg.blockDimZ = bz; cfg.sharedMemBytes = smem;
  CUlaunchAttribute at[1]; cfg.attrs = at; cfg.numAttrs = 0;
  if (cx * cy * cz > 1) {
    at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[0].value.clusterDim.x = cx; at[0].value.clusterDim.y = cy; at[0].value.clusterDim.z = cz;
    cfg.numAttrs = 1; }
  CUresult r = cuLaunchKernelEx(&cfg, f, args, 0);
  if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
  if (r != CUDA_SUCCESS) { const char *s; cuGetErrorString(r, &s);
    printf("launch %s failed: %s\n", id, s); exit(1); }
}
int main(int argc, char **argv) {
  DATA = argv[1]; OUTD = argc > 2 ? argv[2] : "";
  if (OUTD == "-") OUTD = "";
  int LO = argc > 3 ? atoi(argv[3]) : 0, HI = argc > 4 ? atoi(argv[4]) : 1 << 30;
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuCtxCreate(&ctx, NULL, 0, dev));
"""
    + ("  if (!OUTD.empty()) {\n" + "\n".join(enc) + "\n  }\n")
    + "\n".join(body)
    + r"""
  printf("all done\n"); return 0; }
"""
)
Path(sys.argv[1]).write_text(src)
print("launches", len(man["launches"]))
