// A 32x32 float tile written by rows and read by columns: every warp's read puts its 32 lanes
// into one bank (32 wavefronts per request); the write is conflict-free (1 per request).
// Launch: --block 32,32. Used by tests/test_trace_*.py and docs/tutorial.md.
__global__ void column_read(float *out, const float *in) {
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}
