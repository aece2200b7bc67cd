"""Small workloads compiled by torch.compile (Inductor): each a (name, fn, make_inputs, opts)."""

import torch
import torch.nn.functional as F

dev = "cuda"


def g(*shape, dtype=torch.float32, seed=0):
    gen = torch.Generator(device=dev).manual_seed(seed)
    return torch.randn(*shape, device=dev, dtype=dtype, generator=gen)


def ln_gelu(x, w, b):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), w, b))


def softmax_rows(x):
    return torch.softmax(x, -1)


def col_sum(x):
    return x.sum(0)


def var_mean(x):
    return torch.var_mean(x, dim=1)


def cumsum(x):
    return torch.cumsum(x, 1)


def argmax(x):
    return x.argmax(1)


def index_add(out, idx, src):
    return out.index_add(0, idx, src)


def transpose_add(x, y):
    return x.t() + y


def mm_relu(a, b):
    return (a @ b).relu()


def sort_rows(x):
    return torch.sort(x, dim=-1)


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def train_step(x, w1, w, b):
    h = F.layer_norm(x @ w1, (w1.shape[1],), w, b)
    loss = F.gelu(h).square().mean()
    loss.backward()
    return w.grad, b.grad


def attention(q, k, v):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b, h, qi, ki):
        return qi >= ki

    mask = create_block_mask(causal, 1, 1, q.shape[2], k.shape[2], device=dev)
    return flex_attention(q, k, v, block_mask=mask)


def sdpa_math(q, k, v):
    s = (q @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    return torch.softmax(s.float(), -1).to(q.dtype) @ v


def req(*shape, dtype=torch.float32, seed=0):
    return g(*shape, dtype=dtype, seed=seed).requires_grad_()


WORK = [
    (
        "ln_gelu",
        ln_gelu,
        lambda: (
            g(512, 1024, dtype=torch.float16),
            g(1024, dtype=torch.float16),
            g(1024, dtype=torch.float16),
        ),
        {},
    ),
    ("softmax_rows", softmax_rows, lambda: (g(256, 1000),), {}),
    ("col_sum", col_sum, lambda: (g(4096, 512),), {}),
    ("var_mean", var_mean, lambda: (g(64, 8192),), {}),
    ("cumsum", cumsum, lambda: (g(64, 1024),), {}),
    ("argmax", argmax, lambda: (g(128, 3000, dtype=torch.float16),), {}),
    (
        "index_add",
        index_add,
        lambda: (
            torch.zeros(64, 128, device=dev),
            (torch.arange(1024, device=dev) * 7) % 64,
            g(1024, 128),
        ),
        {},
    ),
    ("transpose_add", transpose_add, lambda: (g(1024, 768), g(768, 1024)), {}),
    ("sort_rows", sort_rows, lambda: (g(64, 512),), {}),
    (
        "rms_norm",
        rms_norm,
        lambda: (g(256, 4096, dtype=torch.bfloat16), g(4096, dtype=torch.bfloat16)),
        {},
    ),
    (
        "train_step",
        train_step,
        lambda: (g(256, 512), req(512, 768, seed=1), req(768, seed=2), req(768, seed=3)),
        {},
    ),
    (
        "sdpa_math",
        sdpa_math,
        lambda: tuple(g(2, 4, 256, 64, dtype=torch.float16, seed=s) for s in range(3)),
        {},
    ),
    (
        "mm_relu",
        mm_relu,
        lambda: (g(256, 512, dtype=torch.float16), g(512, 384, dtype=torch.float16, seed=1)),
        {"mode": "max-autotune-no-cudagraphs"},
    ),
    (
        "attention",
        attention,
        lambda: tuple(g(1, 4, 256, 64, dtype=torch.float16, seed=s) for s in range(3)),
        {},
    ),
]
