// The grouped kernel's host program (issue 29): the problem array and the operands are
// cudaMalloc'd and filled with cudaMemcpy, as a grouped GEMM's host code does, then
// grouped.sm_90.cubin (the kept cubin: the very binary the tests trace) is launched through the
// driver API with 4 blocks of 64 threads. Before the launch the program writes, into OUTDIR,
// what `shmem trace --params @... --memory ADDR=@...` needs to replay that launch: the
// parameter block (the kernel's argument bytes at their offsets), the bytes of the problem
// array and of every operand with their real device addresses (memory.txt), and the replay
// command (replay.txt). After the launch: out.bin (what the kernel wrote).
// Usage: host CUBIN OUTDIR
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct Problem {
    int M, N, K, pad;
    const float* A;
    const float* B;
};
static_assert(sizeof(Problem) == 32, "Problem is 32 bytes, as the kernel reads it");

// the kernel's parameters as the launch lays them out: (problems, groups, out)
struct Args {
    const Problem* problems;
    int groups;
    float* out;
};
static_assert(sizeof(Args) == 24, "the parameter block is 24 bytes");

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(1);                                                         \
        }                                                                         \
    } while (0)
#define CHECK_CU(x)                                                               \
    do {                                                                          \
        CUresult r_ = (x);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                 \
            const char* s_ = nullptr;                                             \
            cuGetErrorString(r_, &s_);                                            \
            std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, s_ ? s_ : "?"); \
            std::exit(1);                                                         \
        }                                                                         \
    } while (0)

static std::string dir;

static void dump(const char* name, const void* data, size_t size) {
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(1);
    }
    std::fclose(f);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: host CUBIN OUTDIR\n");
        return 2;
    }
    dir = argv[2];
    CHECK(cudaFree(0));  // the runtime's primary context, current for the driver API too
    CUmodule module;
    CUfunction kernel;
    CHECK_CU(cuModuleLoad(&module, argv[1]));
    CHECK_CU(cuModuleGetFunction(&kernel, module, "grouped_tiles"));

    // (M, N, K) per group: the tests' (tests/test_trace_memory.py)
    const int sizes[3][3] = {{64, 1, 1280}, {32, 2, 256}, {64, 8, 768}};
    const int groups = 3, blocks = 4, threads = 64;
    std::vector<Problem> problems(groups);
    FILE* listing = std::fopen((dir + "/memory.txt").c_str(), "w");
    std::string replay = "--params @params.bin";
    char line[256];
    for (int g = 0; g < groups; ++g) {
        const int K = sizes[g][2];
        std::vector<float> a(K), b(K / 4);
        for (int i = 0; i < K; ++i) a[i] = 0.25f * ((i * 7 + g) % 13);
        for (int i = 0; i < K / 4; ++i) b[i] = 0.5f * ((i * 5 + g) % 11);
        float *da, *db;
        CHECK(cudaMalloc(&da, a.size() * 4));
        CHECK(cudaMalloc(&db, b.size() * 4));
        CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
        problems[g] = Problem{sizes[g][0], sizes[g][1], K, 0, da, db};
        // the bytes as they are in device memory: copied back, as a host program would dump
        std::vector<float> back(K);
        CHECK(cudaMemcpy(back.data(), da, K * 4, cudaMemcpyDeviceToHost));
        std::snprintf(line, sizeof line, "A%d.bin", g);
        dump(line, back.data(), K * 4);
        std::fprintf(listing, "%p %s %d\n", (void*)da, line, K * 4);
        std::snprintf(line, sizeof line, " --memory %p=@A%d.bin", (void*)da, g);
        replay += line;
        CHECK(cudaMemcpy(back.data(), db, K, cudaMemcpyDeviceToHost));
        std::snprintf(line, sizeof line, "B%d.bin", g);
        dump(line, back.data(), K);
        std::fprintf(listing, "%p %s %d\n", (void*)db, line, K);
        std::snprintf(line, sizeof line, " --memory %p=@B%d.bin", (void*)db, g);
        replay += line;
    }
    Problem* dp;
    float* dout;
    CHECK(cudaMalloc(&dp, sizeof(Problem) * groups));
    CHECK(cudaMalloc(&dout, sizeof(float) * 64 * blocks));
    CHECK(cudaMemset(dout, 0, sizeof(float) * 64 * blocks));
    CHECK(cudaMemcpy(dp, problems.data(), sizeof(Problem) * groups, cudaMemcpyHostToDevice));
    std::vector<Problem> check(groups);
    CHECK(cudaMemcpy(check.data(), dp, sizeof(Problem) * groups, cudaMemcpyDeviceToHost));
    dump("problems.bin", check.data(), sizeof(Problem) * groups);
    std::fprintf(listing, "%p problems.bin %zu\n", (void*)dp, sizeof(Problem) * groups);
    std::fclose(listing);
    std::snprintf(line, sizeof line, " --memory %p=@problems.bin", (void*)dp);
    replay = line + (" " + replay);

    Args args{};  // zeroed: the padding after groups is written as zeros
    std::memset(&args, 0, sizeof args);
    args.problems = dp;
    args.groups = groups;
    args.out = dout;
    dump("params.bin", &args, sizeof args);
    void* params[] = {&args.problems, &args.groups, &args.out};
    FILE* rep = std::fopen((dir + "/replay.txt").c_str(), "w");
    std::fprintf(rep, "shmem trace grouped.sm_90.cubin -b %d -g %d%s\n", threads, blocks,
                 replay.c_str());
    std::fclose(rep);

    CHECK_CU(cuLaunchKernel(kernel, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
    CHECK(cudaDeviceSynchronize());
    std::vector<float> out(64 * blocks);
    CHECK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    dump("out.bin", out.data(), out.size() * 4);
    std::printf("problems at %p, out at %p; out[0]=%g out[64]=%g out[128]=%g\n", (void*)dp,
                (void*)dout, out[0], out[64], out[128]);
    return 0;
}
