"""The project's own Triton kernels for op_misc (docs/hardware-model.md 9e): masked global
loads, stores and atomics in programs of 4 warps whose later warps have every lane masked off
(n = 40 of 128 elements: warp 1 has 8 lanes on, warps 2 and 3 none). Triton's several masked
loads or stores of one mask stay predicated (`@!P0 LDG`, `@!P0 STG`), where ptxas branches
around one written in CUDA C (and around a single masked load or any masked atomic here too),
so these are the launches that show what a guarded-off global load costs."""

import triton
import triton.language as tl


@triton.jit
def masked_load(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0)


@triton.jit
def masked_store(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


@triton.jit
def masked_both(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


@triton.jit
def masked_atomic(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + offs, 1.0, mask=offs < n)


@triton.jit
def masked_atomic_ret(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    old = tl.atomic_add(out_ptr + offs, 1.0, mask=offs < n)
    tl.store(x_ptr + offs, old)


@triton.jit
def masked_load_x4(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x_ptr + offs, mask=m, other=0.0)
    b = tl.load(x_ptr + BLOCK + offs, mask=m, other=0.0)
    c = tl.load(x_ptr + 2 * BLOCK + offs, mask=m, other=0.0)
    d = tl.load(x_ptr + 3 * BLOCK + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, a + b + c + d)


@triton.jit
def masked_store_x4(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x, mask=m)
    tl.store(out_ptr + BLOCK + offs, x + 1.0, mask=m)
    tl.store(out_ptr + 2 * BLOCK + offs, x + 2.0, mask=m)
    tl.store(out_ptr + 3 * BLOCK + offs, x + 3.0, mask=m)


@triton.jit
def masked_atomic_x4(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out_ptr + offs, 1.0, mask=m)
    tl.atomic_add(out_ptr + BLOCK + offs, 1.0, mask=m)
    tl.atomic_add(out_ptr + 2 * BLOCK + offs, 1.0, mask=m)
    tl.atomic_add(out_ptr + 3 * BLOCK + offs, 1.0, mask=m)


@triton.jit
def masked_atomic_ret_x4(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.atomic_add(out_ptr + offs, 1.0, mask=m)
    b = tl.atomic_add(out_ptr + BLOCK + offs, 1.0, mask=m)
    c = tl.atomic_add(out_ptr + 2 * BLOCK + offs, 1.0, mask=m)
    d = tl.atomic_add(out_ptr + 3 * BLOCK + offs, 1.0, mask=m)
    tl.store(x_ptr + offs, a + b + c + d)
