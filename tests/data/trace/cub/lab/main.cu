// The lab's launches, in the order tests/test_trace_cub.py lists them: each kernel of
// ../kernels.cu on 4 blocks, its input read from ../inputs/NAME_in.bin (the bytes the test
// gives the trace), its output thrown away.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../kernels.cu"

static void* upload(const char* dir, const char* name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s_in.bin", dir, name);
  FILE* f = fopen(p, "rb");
  if (!f) { fprintf(stderr, "no %s\n", p); exit(1); }
  std::vector<char> bytes;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  fclose(f);
  void* d;
  cudaMalloc(&d, bytes.size());
  cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  return d;
}

int main(int argc, char** argv) {
  const char* in = argc > 1 ? argv[1] : "../inputs";
  const int G = 4;
  void* o;
  cudaMalloc(&o, 1 << 20);
  cudaMemset(o, 0, 1 << 20);
  radix<<<G, 128>>>((const int*)upload(in, "radix"), (int*)o);
  radix<<<G, 128>>>((const int*)upload(in, "radix_ties"), (int*)o);
  scan<<<G, 256>>>((const int*)upload(in, "scan"), (int*)o);
  load_transpose<<<G, 128>>>((const float*)upload(in, "load"), (float*)o);
  cudaMemset(o, 0, 1 << 20);
  hist<<<G, 128>>>((const unsigned char*)upload(in, "hist"), (unsigned*)o);
  cudaMemset(o, 0, 1 << 20);
  hist<<<G, 128>>>((const unsigned char*)upload(in, "hist_skew"), (unsigned*)o);
  reduce<<<G, 256>>>((const float*)upload(in, "reduce"), (float*)o);
  radix64<<<G, 128>>>((const unsigned long long*)upload(in, "radix64"), (unsigned long long*)o);
  merge_sort<<<G, 128>>>((const float*)upload(in, "merge"), (float*)o);
  exchange<<<G, 128>>>((const double*)upload(in, "exchange"), (double*)o);
  run_length<<<G, 128>>>((const int*)upload(in, "run_length"), (int*)o);
  cudaError_t err = cudaDeviceSynchronize();
  printf("done: %s\n", cudaGetErrorString(err));
  return err != cudaSuccess;
}
