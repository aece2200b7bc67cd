// A stand-in for the driver's cuTensorMapEncodeTiled, for building a host program on a
// machine without a GPU (no libcuda), so that the parameter block it dumps for
// `shmem trace --params` holds its TMA descriptors (docs/recipes.md, "Without a GPU").
//
// It writes the 128 bytes in the layout the driver used on an H200 (CUDA 13.0), the layout
// shmem decodes (shmem_cli/trace/kernel/tensormap.py); tests/test_recipes_standin.py checks
// it byte for byte against maps the driver encoded. Tiled, non-interleaved maps only.
//
// Include it in exactly one translation unit of the host program, and build that program with
// -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 so that CUTLASS calls cuTensorMapEncodeTiled by
// name (this definition) instead of asking the absent driver for it. Never link it into a
// program that runs on a GPU.
#pragma once
#include <cuda.h>
#include <cstdint>
#include <cstring>

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elem_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  // per CUtensorMapDataType (0..12): the code the map keeps, element bytes, the tf32 flag
  static const uint32_t kCode[13] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 7, 8};
  static const uint32_t kBytes[13] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (!map || unsigned(dtype) > 12 || rank < 1 || rank > 5 || !dims || !box || !elem_strides ||
      (rank > 1 && !strides) || interleave != CU_TENSOR_MAP_INTERLEAVE_NONE ||
      unsigned(swizzle) > 3 || unsigned(l2) > 3 || unsigned(oob) > 1)
    return CUDA_ERROR_INVALID_VALUE;
  uint32_t w[32] = {0};
  uint64_t a = uint64_t(uintptr_t(address));
  uint32_t tf32 = dtype == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
                  dtype == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
  w[0] = uint32_t(a);
  w[1] = uint32_t(a >> 32);
  w[2] = ((rank - 1) << 4) | (kCode[dtype] << 7) | (uint32_t(swizzle) << 13) |
         (uint32_t(oob) << 15) | (tf32 << 16) | (uint32_t(l2) << 17);
  uint64_t box_bytes = kBytes[dtype];
  for (cuuint32_t k = 0; k < rank; ++k) {
    if (dims[k] < 1 || dims[k] > (uint64_t(1) << 32) || box[k] < 1 || box[k] > 256 ||
        elem_strides[k] < 1 || elem_strides[k] > 8)
      return CUDA_ERROR_INVALID_VALUE;
    if (k + 1 < rank) {  // strides of dimensions 1.., bytes, multiples of 16
      // (CUTLASS gives a batch of one the stride 0)
      if (strides[k] % 16 || strides[k] >= (uint64_t(1) << 40) ||
          (strides[k] == 0 && dims[k + 1] != 1))
        return CUDA_ERROR_INVALID_VALUE;
      w[3 + k] = uint32_t(strides[k] >> 4);
    }
    w[8 + k] = uint32_t(dims[k] - 1);
    w[13] |= (elem_strides[k] - 1) << (3 * k);
    if (k > 0) w[14] |= (box[k] - 1) << (8 * (k - 1));
    uint32_t moved = box[k] / elem_strides[k];
    box_bytes *= moved ? moved : 1;
  }
  w[13] |= (box[0] - 1) << 24;
  w[16] = uint32_t(box_bytes);
  w[18] = swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? 16 : 128u << uint32_t(swizzle);  // swizzle atom bytes
  std::memcpy(map, w, sizeof w);
  return CUDA_SUCCESS;
}
