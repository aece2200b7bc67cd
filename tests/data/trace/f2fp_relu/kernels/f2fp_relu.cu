// Pairs of floats converted to bf16x2 and f16x2 with .relu, as CUTLASS 3.x's epilogue with a
// ReLU activation (LinCombEltAct<ReLu>, LinCombPerColBiasEltAct<ReLu>) compiles its
// conversion to bf16 or half: F2FP.RELU.BF16.F32.PACK_AB and F2FP.RELU.F16.F32.PACK_AB.
// Thread i converts (in[2i], in[2i+1]) and writes both words; each thread then stores its
// two words to shared memory and reads its neighbour's (a shared access the trace records).
//
// nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a (build.sh)
__global__ void f2fp_relu(const float *in, unsigned *out) {
  __shared__ unsigned words[2 * 64];
  const int i = threadIdx.x;
  const float hi = in[2 * i], lo = in[2 * i + 1];
  unsigned bf, h;
  asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(bf) : "f"(hi), "f"(lo));
  asm("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(hi), "f"(lo));
  words[2 * i] = bf;
  words[2 * i + 1] = h;
  __syncthreads();
  out[2 * i] = words[2 * i];
  out[2 * i + 1] = words[2 * i + 1];
}
