"""The kernel of this folder's entries (the project's own): a (16, 64) fp16 tile loaded,
transposed with tl.trans and stored, compiled ahead of time (no GPU) by Triton 3.2.0, 3.3.1,
3.4.0 and 3.6.0 for GPUTarget("cuda", 90, 32) with BLOCK=1024, num_warps=4, src/dst/n
divisible by 16 and s_in=1 (compiled in, as Triton's launcher specializes an integer 1)."""

import triton
import triton.language as tl


@triton.jit
def spec_copy(src, dst, n, s_in, s_out, off, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    v = tl.load(src + off + offs * s_in, mask=ok)
    t = tl.reshape(v, (BLOCK // 64, 64))
    t = tl.trans(t)
    tl.store(dst + offs * s_out, tl.reshape(t, (BLOCK,)), mask=ok)
