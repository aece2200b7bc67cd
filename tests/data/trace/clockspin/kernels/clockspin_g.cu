// Built with -G (tests/data/trace/clockspin/README.md): clock() is a call to a function
// that keeps its return address in local memory, and the delay's variables live there.
#define N 256

extern "C" __global__ void cs_g_delay(float *out, long long cycles) {
  __shared__ float s[N];
  long long t0 = clock();
  while (clock() - t0 < cycles) {
  }
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 2) % N];
}

extern "C" __global__ void cs_g_plain(float *out, long long cycles) {
  __shared__ float s[N];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 2) % N];
}
