// a histogram spread over a cluster: bin b lives in CTA b % cluster size, updated through DSMEM
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void cluster_hist(int const* keys, int* out, int n) {
  __shared__ int bins[256];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned ranks = cluster.num_blocks();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) bins[i] = 0;
  cluster.sync();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int k = keys[i] & 1023;
    int* home = cluster.map_shared_rank(bins, k % ranks);
    atomicAdd(&home[k / ranks % 256], 1);
  }
  cluster.sync();
  for (int j = threadIdx.x; j < 256; j += blockDim.x) atomicAdd(&out[j], bins[j]);
}
