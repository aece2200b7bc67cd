// A texture fetch, which the trace emulator does not run (what a texture holds is not in
// the launch's memory): shmem trace must stop with an error naming the instruction and its
// line. Launch: --block 32
__global__ void texture_read(float *out, cudaTextureObject_t tex) {
  __shared__ float tile[32];
  tile[threadIdx.x] = tex1Dfetch<float>(tex, threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = tile[31 - threadIdx.x];
}
