// Runs docs/examples/tensormap_standin.h over maps read from stdin, one a line:
//   DTYPE RANK ADDRESS DIMS... STRIDES... BOX... ELEM... SWIZZLE L2 OOB
// (the CUtensorMapDataType/CUtensorMapSwizzle/... numbers) and writes each map's 128 bytes to
// stdout, or 128 bytes of 0xff where the stand-in refused it.
#include "tensormap_standin.h"
#include <cstdio>

int main() {
  int dtype, sw, l2, oob;
  unsigned rank;
  unsigned long long address;
  while (std::scanf("%d %u %llu", &dtype, &rank, &address) == 3) {
    cuuint64_t dims[5] = {0}, strides[5] = {0};
    cuuint32_t box[5] = {0}, elem[5] = {0};
    if (rank < 1 || rank > 5) return 2;
    for (unsigned k = 0; k < rank; ++k) std::scanf("%llu", (unsigned long long *)&dims[k]);
    for (unsigned k = 0; k + 1 < rank; ++k) std::scanf("%llu", (unsigned long long *)&strides[k]);
    for (unsigned k = 0; k < rank; ++k) std::scanf("%u", &box[k]);
    for (unsigned k = 0; k < rank; ++k) std::scanf("%u", &elem[k]);
    if (std::scanf("%d %d %d", &sw, &l2, &oob) != 3) return 2;
    CUtensorMap map;
    CUresult r = cuTensorMapEncodeTiled(&map, CUtensorMapDataType(dtype), rank,
                                        reinterpret_cast<void *>(address), dims, strides, box,
                                        elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                        CUtensorMapSwizzle(sw), CUtensorMapL2promotion(l2),
                                        CUtensorMapFloatOOBfill(oob));
    if (r != CUDA_SUCCESS) std::memset(&map, 0xff, sizeof map);
    std::fwrite(&map, sizeof map, 1, stdout);
  }
  return 0;
}
