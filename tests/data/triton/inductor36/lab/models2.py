"""More Inductor workloads: max-autotune templates (TMA persistent, bmm, addmm, conv, int8,
fp8), FlexAttention backward and decoding, cooperative reductions, losses' backward."""

import torch
import torch.nn.functional as F
from models import dev, g, req  # the same inputs' makers

MA = {"mode": "max-autotune-no-cudagraphs"}


def mm_tma(a, b):
    return a @ b


def bmm(a, b):
    return torch.bmm(a, b)


def addmm_gelu(x, w, b):
    return F.gelu(torch.addmm(b, x, w))


def conv(x, w):
    return F.conv2d(x, w, padding=1)


def int_mm(a, b):
    return torch._int_mm(a, b)


def fp8_mm(a, b, sa, sb):
    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def _causal(b, h, qi, ki):
    return qi >= ki


def flex_bwd(q, k, v):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    mask = create_block_mask(_causal, 1, 1, q.shape[2], k.shape[2], device=dev)
    out = flex_attention(q, k, v, block_mask=mask)
    out.sum().backward()
    return q.grad


def flex_decode(q, k, v):
    from torch.nn.attention.flex_attention import flex_attention

    return flex_attention(q, k, v)


def coop_sum(x):
    return x.sum(1)


def xent(logits, target):
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return logits.grad


def emb_bwd(w, idx):
    out = F.embedding(idx, w).sum()
    out.backward()
    return w.grad


def group_norm(x, w, b):
    return F.group_norm(x, 8, w, b)


def fp8_pair():
    a = g(256, 512).to(torch.float8_e4m3fn)
    b = g(384, 512, seed=1).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev)
    return a, b, one, one.clone()


def int8_pair():
    a = torch.randint(-8, 8, (256, 512), device=dev, dtype=torch.int8)
    b = torch.randint(-8, 8, (512, 384), device=dev, dtype=torch.int8)
    return a, b


WORK = [
    (
        "mm_tma",
        mm_tma,
        lambda: (g(512, 512, dtype=torch.float16), g(512, 512, dtype=torch.float16, seed=1)),
        {"options": {"max_autotune": True, "triton.enable_persistent_tma_matmul": True}},
    ),
    (
        "bmm",
        bmm,
        lambda: (g(4, 256, 128, dtype=torch.float16), g(4, 128, 256, dtype=torch.float16, seed=1)),
        MA,
    ),
    (
        "addmm_gelu",
        addmm_gelu,
        lambda: (
            g(256, 384, dtype=torch.bfloat16),
            g(384, 512, dtype=torch.bfloat16, seed=1),
            g(512, dtype=torch.bfloat16, seed=2),
        ),
        MA,
    ),
    (
        "conv",
        conv,
        lambda: (
            g(2, 32, 16, 16, dtype=torch.float16),
            g(64, 32, 3, 3, dtype=torch.float16, seed=1),
        ),
        {"options": {"max_autotune": True, "max_autotune_conv_backends": "TRITON"}},
    ),
    ("int_mm", int_mm, int8_pair, MA),
    ("fp8_mm", fp8_mm, fp8_pair, MA),
    (
        "flex_bwd",
        flex_bwd,
        lambda: tuple(req(1, 2, 256, 64, dtype=torch.float16, seed=s) for s in range(3)),
        {},
    ),
    (
        "flex_decode",
        flex_decode,
        lambda: (
            g(1, 4, 16, 64, dtype=torch.float16),
            g(1, 4, 1024, 64, dtype=torch.float16, seed=1),
            g(1, 4, 1024, 64, dtype=torch.float16, seed=2),
        ),
        {},
    ),
    (
        "coop_sum",
        coop_sum,
        lambda: (g(8, 65536),),
        {"options": {"triton.cooperative_reductions": True}},
    ),
    ("xent", xent, lambda: (req(128, 1000), (torch.arange(128, device=dev) * 37) % 1000), {}),
    ("emb_bwd", emb_bwd, lambda: (req(500, 64), (torch.arange(2048, device=dev) * 13) % 500), {}),
    ("group_norm", group_norm, lambda: (g(4, 64, 32, 32), g(64), g(64)), {}),
]
