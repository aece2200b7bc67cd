"""Two Triton kernels of the project's own (nothing here is upstream code), of kinds a Triton
user on Hopper writes that the other folders lack:

* ``ws_tile``: one program multiplies a 128 x K fp16 tile of A by a K x 64 tile of B through
  device-side descriptors, its K loop split into producer and consumer partitions by
  ``tl.range(warp_specialize=True)`` (the consumers release each stage with an mbarrier
  arrive of 128, ``SYNCS.ARRIVE.TRANS64.ART0``);
* ``row_sums_ptrs``: program g sums the row whose address is the g-th entry of a pointer
  array (as a grouped GEMM reads its operands), the sum crossing warps through shared memory.
"""

import triton
import triton.language as tl


@triton.jit
def ws_tile(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [BM, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, BN], [BN, 1], [BK, BN])
    acc = tl.zeros([BM, BN], tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([k, 0]), acc)
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc.to(tl.float16))


@triton.jit
def row_sums_ptrs(rows_ptr, out_ptr, n, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    row = tl.load(rows_ptr + g).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    x = tl.load(row + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + g, tl.sum(x, axis=0))


# a row's maximum under a programmatic dependent launch (launch_pdl=True), and the SM id
@triton.jit
def pdl_row_max(x_ptr, out_ptr, sm_ptr, n, BLOCK: tl.constexpr):
    tl.extra.cuda.gdc_wait()
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=float("-inf"))
    m = tl.max(x, axis=0)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(out_ptr + row, m)
    tl.store(sm_ptr + row, tl.extra.cuda.smid())
