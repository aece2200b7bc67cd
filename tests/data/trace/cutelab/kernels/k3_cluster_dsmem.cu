// cluster of 2 CTAs: each CTA fills a tile, then reads its neighbour's tile through DSMEM
#include <cooperative_groups.h>
#include <cute/tensor.hpp>
#include <cute/arch/cluster_sm90.hpp>
namespace cg = cooperative_groups;
using namespace cute;

__global__ void __cluster_dims__(2, 1, 1) neighbour_sum(float const* in, float* out) {
  __shared__ float tile[32][33];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cute::block_rank_in_cluster();
  int t = threadIdx.x;
  for (int r = threadIdx.y; r < 32; r += blockDim.y)
    tile[r][t] = in[(blockIdx.x * 32 + r) * 32 + t];
  cute::cluster_sync();
  float* other = cluster.map_shared_rank(&tile[0][0], rank ^ 1);
  float acc = 0.f;
  for (int r = threadIdx.y; r < 32; r += blockDim.y)
    acc += other[t * 33 + r] + tile[t][r];   // column of the neighbour's tile, and ours
  cluster.sync();
  out[(blockIdx.x * blockDim.y + threadIdx.y) * 32 + t] = acc;
}
