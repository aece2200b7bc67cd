// shmem's own trace test kernels: cp.async (LDGSTS) shared-side patterns, .ca and .cg,
// with and without zero fill, to measure how the hardware counts their wavefronts.
#include <cstdint>

// Lane t copies BYTES from global slot t*GS to shared slot:
//   MODE 0: t*SS    MODE 1: (t%8)*SS + t/8    MODE 2: (t/4)*SS + t%4   (slots of BYTES bytes)
// ZFILL 0: the whole element (constant size); 1: odd lanes copy 0 source bytes (the rest of
// the destination is zero-filled); 2: every lane copies `size` source bytes (a runtime value).
template <int BYTES, bool CG, int MODE, int SS, int GS, int ZFILL>
__global__ void cp_async_pattern(unsigned *out, const unsigned *in, int size) {
  __shared__ __align__(128) unsigned buf[12000];
  unsigned t = threadIdx.x;
  unsigned slot = MODE == 0 ? t * SS : MODE == 1 ? (t % 8) * SS + t / 8 : (t / 4) * SS + t % 4;
  unsigned *dst = &buf[slot * (BYTES / 4)];
  const unsigned *src = &in[t * GS * (BYTES / 4)];
  unsigned dst_addr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  unsigned src_size = ZFILL == 0 ? BYTES : ZFILL == 1 ? ((t & 1) ? 0 : BYTES) : size;
  if (CG && ZFILL == 0)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst_addr), "l"(src)
                 : "memory");
  else if (CG)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_addr), "l"(src),
                 "r"(src_size)
                 : "memory");
  else if (ZFILL == 0)
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst_addr), "l"(src), "n"(BYTES)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst_addr), "l"(src),
                 "n"(BYTES), "r"(src_size)
                 : "memory");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  __syncthreads();
  out[t] = dst[0];
}

template __global__ void cp_async_pattern<16, false, 0, 1, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 1, 2, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 1, 8, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 1, 8, 2>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 1, 9, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 2, 8, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 8, 1, 1>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 8, 1, 2>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, false, 0, 8, 8, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 1, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 1, 1, 1>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 1, 1, 2>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 1, 8, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 1, 8, 2>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 2, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 4, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 8, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 8, 1, 1>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 8, 1, 2>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 0, 8, 8, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<16, true, 1, 9, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 1, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 1, 2, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 1, 32, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 1, 33, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 1, 8, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 1, 9, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 2, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 32, 1, 1>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 0, 32, 32, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 1, 129, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 1, 129, 32, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 1, 129, 33, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<4, false, 2, 129, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<8, false, 0, 1, 16, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<8, false, 0, 1, 17, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<8, false, 0, 1, 2, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<8, false, 0, 1, 4, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<8, false, 0, 16, 1, 0>(unsigned *, const unsigned *, int);
template __global__ void cp_async_pattern<8, false, 0, 2, 1, 0>(unsigned *, const unsigned *, int);
