// shmem's own probes for the pair rule (issue 30; nothing here is upstream code): pairs7's
// branch kernel (prb_br64/prb_br128) with other contents and another kind of shared memory.
// prz_*: every element holds 0; prv_*: element k holds k % 2; prd_*: the array in dynamic
// shared memory (extern, 1024-byte aligned), element k holds k; prn_*: nothing is written
// to the array before the read (what the hardware-truth lab's load kernels do).
#define BR64(name, decl, init)                                                          \
  extern "C" __global__ void name(double *out, const int *idx) {                        \
    decl;                                                                               \
    int t = threadIdx.x;                                                                \
    init;                                                                               \
    __syncthreads();                                                                    \
    int k = idx[t];                                                                     \
    double acc = 0.;                                                                    \
    if (k >= 0) { acc = bins[k]; acc = acc * acc + out[t + 32]; out[t + 32] = acc; }    \
    __syncthreads();                                                                    \
    out[t] = acc;                                                                       \
  }
#define BR128(name, decl, init)                                                         \
  extern "C" __global__ void name(float4 *out, const int *idx) {                        \
    decl;                                                                               \
    int t = threadIdx.x;                                                                \
    init;                                                                               \
    __syncthreads();                                                                    \
    int k = idx[t];                                                                     \
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);                                       \
    if (k >= 0) {                                                                       \
      float4 v = bins[k], o = out[t + 32];                                              \
      acc = make_float4(v.x + o.x, v.y + o.y, v.z + o.z, v.w + o.w);                    \
      out[t + 32] = acc;                                                                \
    }                                                                                   \
    __syncthreads();                                                                    \
    out[t] = acc;                                                                       \
  }
#define FILL(n, value) for (int i = t; i < n; i += blockDim.x) bins[i] = value
#define F4(x) make_float4(x, x, x, x)

BR64(prz_br64, __shared__ double bins[256], FILL(256, 0.))
BR64(prv_br64, __shared__ double bins[256], FILL(256, (double)(i % 2)))
BR64(prd_br64, extern __shared__ __align__(1024) unsigned char dyn[]; double *bins = (double *)dyn, FILL(256, (double)i))
BR64(prn_br64, __shared__ double bins[256], (void)0)
BR128(prz_br128, __shared__ float4 bins[128], FILL(128, F4(0.f)))
BR128(prv_br128, __shared__ float4 bins[128], FILL(128, F4((float)(i % 2))))
BR128(prd_br128, extern __shared__ __align__(1024) unsigned char dyn[]; float4 *bins = (float4 *)dyn, FILL(128, F4((float)i)))
BR128(prn_br128, __shared__ float4 bins[128], (void)0)
