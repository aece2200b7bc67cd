// CuTe sm80-style half GEMM: cp.async G->S, swizzled smem, ldmatrix S->R, mma.sync
#include <cute/tensor.hpp>
using namespace cute;

template <int BM, int BN, int BK>
__global__ void hgemm_sm80(half_t const* A, half_t const* B, float* C, int M, int N, int K) {
  // A is MxK row-major (K-major), B is NxK (K-major), C is MxN row-major
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, Int<1>{}));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));

  auto cta_tiler = make_shape(Int<BM>{}, Int<BN>{}, Int<BK>{});
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)

  // swizzled smem: 8x32 halves atoms with Swizzle<2,3,3>
  auto swz_atom = composition(Swizzle<2, 3, 3>{},
                              Layout<Shape<_8, Int<BK>>, Stride<Int<BK>, _1>>{});
  auto sA_layout = tile_to_shape(swz_atom, make_shape(Int<BM>{}, Int<BK>{}));
  auto sB_layout = tile_to_shape(swz_atom, make_shape(Int<BN>{}, Int<BK>{}));
  __shared__ half_t smemA[cosize_v<decltype(sA_layout)>];
  __shared__ half_t smemB[cosize_v<decltype(sB_layout)>];
  Tensor sA = make_tensor(make_smem_ptr(smemA), sA_layout);
  Tensor sB = make_tensor(make_smem_ptr(smemB), sB_layout);

  // cp.async copies: 128 threads, 8 halves each
  TiledCopy g2s = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},
                                  Layout<Shape<_32, _4>, Stride<_4, _1>>{},
                                  Layout<Shape<_1, _8>>{});
  ThrCopy thr_g2s = g2s.get_slice(threadIdx.x);
  Tensor tAgA = thr_g2s.partition_S(gA);
  Tensor tAsA = thr_g2s.partition_D(sA);
  Tensor tBgB = thr_g2s.partition_S(gB);
  Tensor tBsB = thr_g2s.partition_D(sB);

  TiledMMA mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{},
                                Tile<_32, _32, _16>{});
  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA);
  Tensor tCrB = thr_mma.partition_fragment_B(sB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  TiledCopy s2r_a = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
  ThrCopy thr_s2r_a = s2r_a.get_slice(threadIdx.x);
  Tensor tXsA = thr_s2r_a.partition_S(sA);
  Tensor tXrA = thr_s2r_a.retile_D(tCrA);
  TiledCopy s2r_b = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
  ThrCopy thr_s2r_b = s2r_b.get_slice(threadIdx.x);
  Tensor tXsB = thr_s2r_b.partition_S(sB);
  Tensor tXrB = thr_s2r_b.retile_D(tCrB);

  int k_tiles = size<3>(tAgA);
  for (int kt = 0; kt < k_tiles; ++kt) {
    copy(g2s, tAgA(_, _, _, kt), tAsA);
    copy(g2s, tBgB(_, _, _, kt), tBsB);
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();
    CUTE_UNROLL
    for (int kb = 0; kb < size<2>(tCrA); ++kb) {
      copy(s2r_a, tXsA(_, _, kb), tXrA(_, _, kb));
      copy(s2r_b, tXsB(_, _, kb), tXrB(_, _, kb));
      gemm(mma, tCrA(_, _, kb), tCrB(_, _, kb), tCrC);
    }
    __syncthreads();
  }
  copy(tCrC, tCgC);
}

template __global__ void hgemm_sm80<64, 64, 32>(half_t const*, half_t const*, float*, int, int, int);
