// Warp reconvergence probes (issue 29): when do the lanes of a warp that split at an
// elect.sync rejoin at the BSYNC that ends the branch? Each kernel runs 64 threads (one
// block): warp 0 is the warp under test, warp 1 helps (it completes an mbarrier late).
// After the branch every lane of warp 0 runs probe(): it records __activemask() and reads
// shared memory (one LDS.128 at a uniform address, one LDS per lane); Nsight's source
// page counts how many times each probe instruction ran (once a pass: the warp rejoined;
// twice: it ran on in two parts).
#include <cstdint>

#define DEV __device__ __forceinline__

struct Smem {
  uint4 tile[64];
  unsigned long long bar;
  unsigned long long bar2;
  unsigned long long ack;   // warp 0 took the stage (k_passes, k_producer): warp 1 may refill
  unsigned long long ack2;  // warp 0 passed the second barrier's phase
};

DEV unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

DEV bool elect_one() {
  unsigned pred;
  asm volatile(
      "{ .reg .pred p; .reg .b32 r;\n"
      "  elect.sync r|p, 0xffffffff;\n"
      "  selp.u32 %0, 1, 0, p; }\n"
      : "=r"(pred)::"memory");
  return pred != 0;
}

DEV void bar_init(unsigned long long* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count) : "memory");
}

DEV void bar_arrive(unsigned long long* b) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(b)) : "memory");
}

DEV bool bar_try_wait(unsigned long long* b, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{ .reg .pred p;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p; }\n"
      : "=r"(ok)
      : "r"(smem_addr(b)), "r"(parity)
      : "memory");
  return ok != 0;
}

DEV void bar_wait(unsigned long long* b, unsigned parity) {  // CUTLASS-style spin
  while (!bar_try_wait(b, parity)) {
  }
}

DEV void fence() { asm volatile("" ::: "memory"); }

// sleep about n microseconds (a loop ptxas keeps rolled)
DEV void nap(int n) {
#pragma unroll 1
  for (int i = 0; i < n; ++i) __nanosleep(1000);
}

// CUTLASS-style wait: the try_wait loop written in PTX with a suspend-time hint (ptxas
// expands it to TRYWAIT, NANOSLEEP.SYNCS and a PHASECHK retry, as in example 57)
DEV void bar_wait_hint(unsigned long long* b, unsigned parity) {
  asm volatile(
      "{ .reg .pred p;\n"
      "WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, 0x989680;\n"
      "  @p bra DONE_%=;\n"
      "  bra WAIT_%=;\n"
      "DONE_%=:\n"
      "}\n" ::"r"(smem_addr(b)),
      "r"(parity)
      : "memory");
}

// the probe: what the warp looks like here, and two shared loads counted per instruction
DEV void probe(Smem& s, unsigned* out, int slot) {
  unsigned lane = threadIdx.x & 31;
  unsigned m = __activemask();
  uint4 v = s.tile[slot];                                  // LDS.128, one address
  unsigned w = reinterpret_cast<unsigned*>(s.tile)[lane];  // LDS, a word a lane
  out[(slot * 32 + lane) * 2] = m;
  out[(slot * 32 + lane) * 2 + 1] = v.x + v.y + v.z + v.w + w;
  fence();
}

// fill the tile; with_bar: set up the two mbarriers (one arrival a phase); n == 0 (the
// "ready" launches): complete the first one's phase 0 at once, so its waits never wait
DEV void setup(Smem& s, bool with_bar, int n = -1) {
  for (int i = threadIdx.x; i < 64; i += blockDim.x) s.tile[i] = make_uint4(i, 2 * i, 3 * i, 4 * i);
  if (with_bar && threadIdx.x == 0) {
    bar_init(&s.bar, 1);
    bar_init(&s.bar2, 1);
    bar_init(&s.ack, 1);
    bar_init(&s.ack2, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    if (n == 0) bar_arrive(&s.bar);
  }
  __syncthreads();
}

// warp 1's lane 0: wait about `sleeps` microseconds, then complete the barrier (warp 0's
// elected lane spins meanwhile); nothing for sleeps == 0 (setup completed it)
DEV void helper_arrive(Smem& s, unsigned long long* b, int sleeps) {
  if (threadIdx.x == 32 && sleeps > 0) {
    nap(sleeps);
    bar_arrive(b);
  }
}

// k_loop: the elected lane runs a long counted loop over global memory (ptxas puts no YIELD
// in it): the control, a branch whose one side runs long without yielding.
extern "C" __global__ void k_loop(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, false);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      unsigned a = 0;
      for (int i = 0; i < n; ++i) a += *(volatile const unsigned*)&in[(a + i) & 7];
      s.tile[40] = make_uint4(a, a, a, a);
      fence();
    }
    probe(s, out, 0);
  }
}

// k_spin: the elected lane spins on an mbarrier (try_wait loop) that warp 1 completes late:
// ex57's producer shape.
extern "C" __global__ void k_spin(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      bar_wait(&s.bar, 0);
      s.tile[40] = make_uint4(1, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_trywait_once: the elected lane makes one try_wait (no loop): suspended in it, no YIELD.
extern "C" __global__ void k_trywait_once(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      unsigned ok = bar_try_wait(&s.bar, 0);
      s.tile[40] = make_uint4(ok, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
    out[4096 + threadIdx.x] = 1;
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_sleep: the elected lane sleeps once (NANOSLEEP, no loop).
extern "C" __global__ void k_sleep(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, false);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      __nanosleep(20000);
      s.tile[40] = make_uint4(1, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
  }
}

// k_spin_syncwarp: k_spin, then __syncwarp() (WARPSYNC) and the probe again.
extern "C" __global__ void k_spin_syncwarp(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      bar_wait(&s.bar, 0);
      s.tile[40] = make_uint4(1, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
    __syncwarp();
    probe(s, out, 1);
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_spin_if: k_spin, then a branch on the lane with a loop on one side (a BSSY/BSYNC of its
// own) and the probe again: does a later convergence barrier bring the two parts together?
extern "C" __global__ void k_spin_if(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      bar_wait(&s.bar, 0);
      s.tile[40] = make_uint4(1, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
    unsigned lane = threadIdx.x & 31;
    if (in[lane] & 1) {  // lanes 2, 4, ..., 30 loop (a branch, not predicated)
      unsigned a = 0;
#pragma unroll 1
      for (int i = 0; i < (int)in[lane + 32]; ++i) a += *(volatile const unsigned*)&in[(a + i) & 7];
      out[8192 + lane] = a;
    }
    fence();
    probe(s, out, 1);
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_spin_wait_all: k_spin, then every lane of warp 0 waits on a second mbarrier that warp 1
// completes later still (ex57's scheduler wait after the producer's loop), then the probe.
extern "C" __global__ void k_spin_wait_all(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      bar_wait(&s.bar, 0);
      s.tile[40] = make_uint4(1, 2, 3, 4);
      fence();
    }
    bar_wait(&s.bar2, 0);
    probe(s, out, 0);
  } else if (threadIdx.x == 32) {
    nap(n);
    bar_arrive(&s.bar);
    nap(n);
    bar_arrive(&s.bar2);
  }
}

// k_rest_spin: the mirror: 31 lanes spin on the mbarrier while the elected lane waits at
// the BSYNC.
extern "C" __global__ void k_rest_spin(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    if (!elect_one()) {
      bar_wait(&s.bar, 0);
      s.tile[41] = make_uint4(1, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_passes: 4 passes, each: elect, the elected lane spins on the barrier (warp 1 completes
// it late, after warp 0 took the previous phase), every lane waits for a second one, probe.
extern "C" __global__ void k_passes(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true);
  if (threadIdx.x < 32) {
    for (int pass = 0; pass < 4; ++pass) {
      if (elect_one()) {
        bar_wait(&s.bar, pass & 1);
        s.tile[40 + pass] = make_uint4(pass, 2, 3, 4);
        fence();
        bar_arrive(&s.ack);
      }
      bar_wait(&s.bar2, pass & 1);
      probe(s, out, pass);
      if (threadIdx.x == 0) bar_arrive(&s.ack2);
    }
  } else if (threadIdx.x == 32) {
#pragma unroll 1
    for (int pass = 0; pass < 4; ++pass) {
      if (pass > 0) bar_wait(&s.ack, (pass - 1) & 1);
      nap(n);
      bar_arrive(&s.bar);
      if (pass > 0) bar_wait(&s.ack2, (pass - 1) & 1);
      nap(n);
      bar_arrive(&s.bar2);
    }
  }
}

// k_uniform_spin: control: the whole warp spins on the mbarrier (its retry loop has the
// YIELD; no divergence), then the probe.
extern "C" __global__ void k_uniform_spin(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    bar_wait(&s.bar, 0);
    probe(s, out, 0);
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_spin_hint: the elected lane waits with the CUTLASS-style PTX loop (suspend-time hint).
extern "C" __global__ void k_spin_hint(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true, n);
  if (threadIdx.x < 32) {
    if (elect_one()) {
      bar_wait_hint(&s.bar, 0);
      s.tile[40] = make_uint4(1, 2, 3, 4);
      fence();
    }
    probe(s, out, 0);
  } else {
    helper_arrive(s, &s.bar, n);
  }
}

// k_producer: ex57's producer warp: a loop of in[1] passes (tiles); in each the elected lane
// runs a loop of in[0] stages, each waiting (PTX loop with the hint) for warp 1 to fill the
// stage (warp 1 fills the next only after the elected lane took this one); then every lane
// waits for a second barrier (the scheduler's) and probes.
extern "C" __global__ void k_producer(unsigned* out, const unsigned* in, int n) {
  __shared__ Smem s;
  setup(s, true);
  int stages = in[0], passes = in[1];
  if (threadIdx.x < 32) {
    unsigned phase = 0;
#pragma unroll 1
    for (int pass = 0; pass < passes; ++pass) {
      if (elect_one()) {
#pragma unroll 1
        for (int k = 0; k < stages; ++k) {
          bar_wait_hint(&s.bar, phase & 1);
          ++phase;
          s.tile[40 + (k & 7)] = make_uint4(k, 2, 3, 4);
          fence();
          bar_arrive(&s.ack);
        }
      } else {
        phase += stages;
      }
      bar_wait_hint(&s.bar2, pass & 1);
      probe(s, out, pass & 7);
      if (threadIdx.x == 0) bar_arrive(&s.ack2);
    }
  } else if (threadIdx.x == 32) {
    unsigned filled = 0;
#pragma unroll 1
    for (int pass = 0; pass < passes; ++pass) {
#pragma unroll 1
      for (int k = 0; k < stages; ++k) {
        if (filled > 0) bar_wait_hint(&s.ack, (filled - 1) & 1);
        nap(n);
        bar_arrive(&s.bar);
        ++filled;
      }
      if (pass > 0) bar_wait_hint(&s.ack2, (pass - 1) & 1);
      nap(n);
      bar_arrive(&s.bar2);
    }
  }
}
