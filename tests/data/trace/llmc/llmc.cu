// Kernels in the shapes of llm.c's shared-memory kernels, written anew for shmem's trace.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <float.h>
namespace cg = cooperative_groups;

// LayerNorm forward: one warp per row of C floats, cg::reduce for mean and variance.
__global__ void ln_fwd(float* out, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) return;
    const float* x = inp + (size_t)row * C;
    float s = 0.f;
    for (int i = warp.thread_rank(); i < C; i += 32) s += x[i];
    float m = cg::reduce(warp, s, cg::plus<float>()) / C;
    float v = 0.f;
    for (int i = warp.thread_rank(); i < C; i += 32) { float d = x[i] - m; v += d * d; }
    float r = rsqrtf(cg::reduce(warp, v, cg::plus<float>()) / C + 1e-5f);
    if (warp.thread_rank() == 0) { mean[row] = m; rstd[row] = r; }
    float* o = out + (size_t)row * C;
    for (int i = warp.thread_rank(); i < C; i += 32) o[i] = (x[i] - m) * r * weight[i] + bias[i];
}

// Softmax forward: a block per row, online max/sum per thread, then shared reductions.
__global__ void softmax_fwd(float* out, const float* inp, int N, int C) {
    extern __shared__ float sh[];           // [warps] maxima, then [warps] sums
    int warps = blockDim.x / 32, lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    const float* x = inp + (size_t)blockIdx.x * C;
    float mx = -FLT_MAX, sum = 0.f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        float v = x[i], nm = fmaxf(mx, v);
        sum = sum * expf(mx - nm) + expf(v - nm);
        mx = nm;
    }
    for (int o = 16; o > 0; o /= 2) {
        float om = __shfl_xor_sync(0xffffffff, mx, o), os = __shfl_xor_sync(0xffffffff, sum, o);
        float nm = fmaxf(mx, om);
        sum = sum * expf(mx - nm) + os * expf(om - nm);
        mx = nm;
    }
    if (lane == 0) { sh[wid] = mx; sh[warps + wid] = sum; }
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = sh[0], s = sh[warps];
        for (int w = 1; w < warps; w++) {
            float nm = fmaxf(m, sh[w]);
            s = s * expf(m - nm) + sh[warps + w] * expf(sh[w] - nm);
            m = nm;
        }
        sh[0] = m; sh[warps] = s;
    }
    __syncthreads();
    float m = sh[0], inv = 1.f / sh[warps];
    float* y = out + (size_t)blockIdx.x * C;
    for (int i = threadIdx.x; i < C; i += blockDim.x) y[i] = expf(x[i] - m) * inv;
}

// Flash-attention forward, one warp per block: each thread owns one query row of a
// 32-row tile; K and V tiles of 32 rows are staged in shared memory. Grid (B, NH).
__global__ void attn_fwd2(const float* Q, const float* K, const float* V, int N, int d,
                          int Tc, int Tr, int Bc, int Br, float scale, float* l, float* m,
                          float* O) {
    extern __shared__ float sram[];
    int tx = threadIdx.x, bx = blockIdx.x, by = blockIdx.y;
    int qkv_off = (bx * gridDim.y * N * d) + (by * N * d);
    int lm_off = (bx * gridDim.y * N) + (by * N);
    int tile = Bc * d;
    float* Qi = sram;
    float* Kj = sram + tile;
    float* Vj = sram + 2 * tile;
    float* S = sram + 3 * tile;
    for (int j = 0; j < Tc; j++) {
        for (int x = 0; x < d; x++) {
            Kj[tx * d + x] = K[qkv_off + tile * j + tx * d + x];
            Vj[tx * d + x] = V[qkv_off + tile * j + tx * d + x];
        }
        __syncthreads();
        for (int i = 0; i < Tr; i++) {
            for (int x = 0; x < d; x++) Qi[tx * d + x] = Q[qkv_off + tile * i + tx * d + x];
            float row_m_prev = m[lm_off + Br * i + tx];
            float row_l_prev = l[lm_off + Br * i + tx];
            float row_m = -INFINITY;
            for (int y = 0; y < Bc; y++) {
                float acc = 0;
                for (int x = 0; x < d; x++) acc += Qi[tx * d + x] * Kj[y * d + x];
                acc *= scale;
                S[Bc * tx + y] = acc;
                row_m = fmaxf(row_m, acc);
            }
            float row_l = 0;
            for (int y = 0; y < Bc; y++) {
                S[Bc * tx + y] = __expf(S[Bc * tx + y] - row_m);
                row_l += S[Bc * tx + y];
            }
            float nm = fmaxf(row_m_prev, row_m);
            float nl = __expf(row_m_prev - nm) * row_l_prev + __expf(row_m - nm) * row_l;
            for (int x = 0; x < d; x++) {
                float pv = 0;
                for (int y = 0; y < Bc; y++) pv += S[Bc * tx + y] * Vj[y * d + x];
                size_t o = qkv_off + tile * i + tx * d + x;
                O[o] = (1 / nl) * (row_l_prev * __expf(row_m_prev - nm) * O[o] +
                                   __expf(row_m - nm) * pv);
            }
            m[lm_off + Br * i + tx] = nm;
            l[lm_off + Br * i + tx] = nl;
        }
        __syncthreads();
    }
}

// Fused classifier: a block per row of V logits (padded to P); max and sum by shared
// reductions; the loss and the logits' gradients written in place.
__device__ float block_reduce(float v, bool is_max, float* sh) {
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32, warps = blockDim.x / 32;
    for (int o = 16; o > 0; o /= 2) {
        float t = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, t) : v + t;
    }
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    v = lane < warps ? sh[lane] : (is_max ? -FLT_MAX : 0.f);
    for (int o = 16; o > 0; o /= 2) {
        float t = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, t) : v + t;
    }
    return v;
}

__global__ void classifier(float* logits, float* losses, const float* dlosses,
                           const int* targets, int B, int T, int V, int P) {
    __shared__ float sh[32];
    int row = blockIdx.x;
    float* x = logits + (size_t)row * P;
    float mx = -FLT_MAX;
    for (int i = threadIdx.x; i < V; i += blockDim.x) mx = fmaxf(mx, x[i]);
    mx = block_reduce(mx, true, sh);
    float s = 0.f;
    for (int i = threadIdx.x; i < V; i += blockDim.x) s += expf(x[i] - mx);
    s = block_reduce(s, false, sh);
    float inv = 1.f / s;
    int t = targets[row];
    if (threadIdx.x == 0) losses[row] = -logf(expf(x[t] - mx) * inv);
    float dl = dlosses[row];
    for (int i = threadIdx.x; i < V; i += blockDim.x) {
        float p = expf(x[i] - mx) * inv;
        x[i] = (p - (i == t ? 1.f : 0.f)) * dl;
    }
}

// LayerNorm backward: warps walk rows; dweight and dbias for the block are accumulated
// in shared memory with atomicAdd, written per block to scratch, and the last block
// (found by a global counter) sums the blocks' partials into dweight and dbias.
__global__ void ln_bwd(float* dinp, float* dweight, float* dbias, float* scratch,
                       const float* dout, const float* inp, const float* weight,
                       const float* mean, const float* rstd, int N, int C) {
    extern __shared__ float sh[];           // [C] dbias, [C] dweight
    __shared__ bool last;
    int warps = blockDim.x / 32, lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    float* sb = sh;
    float* sw = sh + C;
    for (int i = threadIdx.x; i < C; i += blockDim.x) { sb[i] = 0.f; sw[i] = 0.f; }
    __syncthreads();
    for (int row = blockIdx.x * warps + wid; row < N; row += gridDim.x * warps) {
        const float* g = dout + (size_t)row * C;
        const float* x = inp + (size_t)row * C;
        float mu = mean[row], rs = rstd[row];
        float a = 0.f, b = 0.f;
        for (int i = lane; i < C; i += 32) {
            float n = (x[i] - mu) * rs, d = weight[i] * g[i];
            a += d;
            b += d * n;
        }
        for (int o = 16; o > 0; o /= 2) {
            a += __shfl_xor_sync(0xffffffff, a, o);
            b += __shfl_xor_sync(0xffffffff, b, o);
        }
        a /= C;
        b /= C;
        float* dx = dinp + (size_t)row * C;
        for (int i = lane; i < C; i += 32) {
            float n = (x[i] - mu) * rs, d = weight[i] * g[i];
            atomicAdd(&sb[i], g[i]);
            atomicAdd(&sw[i], n * g[i]);
            dx[i] += (d - a - n * b) * rs;
        }
    }
    __syncthreads();
    float* part = scratch + 1 + (size_t)blockIdx.x * 2 * C;
    for (int i = threadIdx.x; i < C; i += blockDim.x) { part[i] = sb[i]; part[C + i] = sw[i]; }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int* count = (unsigned int*)scratch;
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        float b = 0.f, w = 0.f;
        for (int k = 0; k < gridDim.x; k++) {
            b += scratch[1 + (size_t)k * 2 * C + i];
            w += scratch[1 + (size_t)k * 2 * C + C + i];
        }
        dbias[i] += b;
        dweight[i] += w;
    }
}

// Bias gradient of a matmul: each block sums 32 columns over N rows; its warps take
// rows in turn and a shared array reduces the warps' partial sums.
__global__ void bias_bwd(float* dbias, const float* dout, int N, int OC) {
    extern __shared__ float sh[];           // [blockDim.x]
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32, warps = blockDim.x / 32;
    int col = blockIdx.x * 32 + lane;
    float s = 0.f;
    for (int r = wid; r < N; r += warps) s += dout[(size_t)r * OC + col];
    sh[threadIdx.x] = s;
    __syncthreads();
    if (wid == 0) {
        float t = 0.f;
        for (int w = 0; w < warps; w++) t += sh[w * 32 + lane];
        dbias[col] += t;
    }
}
