"""A third set: dynamic shapes, tf32 and bf16 templates, dropout, pooling, interpolation,
scans, top-k routing, combo kernels, a grid of 16,384 programs."""

import torch
import torch.nn.functional as F
from models import dev, g, req  # the same inputs' makers

MA = {"mode": "max-autotune-no-cudagraphs"}


def ln_dyn(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b).relu()


def softmax_dyn(x):
    return torch.softmax(x * 0.5, -1)


def mm_tf32(a, b):
    return a @ b


def bmm_bf16(a, b):
    return torch.bmm(a, b) * 2


def dropout(x):
    return F.dropout(x, 0.1, training=True) + 1


def maxpool(x):
    return F.max_pool2d(x, 3, 2, 1)


def avgpool_bwd(x):
    y = F.avg_pool2d(x, 2)
    y.sum().backward()
    return x.grad


def interp(x):
    return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)


def logcumsumexp(x):
    return torch.logcumsumexp(x, 1)


def cumprod(x):
    return torch.cumprod(x, 1)


def topk_route(logits, x):
    w, idx = torch.topk(torch.softmax(logits, -1), 2, dim=-1)
    out = torch.zeros(8, x.shape[1], device=dev)
    return out.index_add(0, idx.flatten(), (x.repeat_interleave(2, 0) * w.flatten()[:, None]))


def combo(a, b, c):
    return a.sum(1), b.amax(0), (c * 2).relu()


def big_red(x):
    return x.float().pow(2).sum(-1).sqrt()


def mean_var_bwd(x):
    m, v = x.mean(0), x.var(0)
    (m.sum() + v.sum()).backward()
    return x.grad


WORK = [
    ("ln_dyn", ln_dyn, lambda: (g(300, 768), g(768), g(768)), {"dynamic": True}),
    ("softmax_dyn", softmax_dyn, lambda: (g(77, 1234),), {"dynamic": True}),
    ("mm_tf32", mm_tf32, lambda: (g(256, 320), g(320, 192, seed=1)), MA),
    (
        "bmm_bf16",
        bmm_bf16,
        lambda: (g(8, 128, 64, dtype=torch.bfloat16), g(8, 64, 128, dtype=torch.bfloat16, seed=1)),
        MA,
    ),
    ("dropout", dropout, lambda: (g(1024, 1024),), {}),
    ("maxpool", maxpool, lambda: (g(4, 32, 56, 56),), {}),
    ("avgpool_bwd", avgpool_bwd, lambda: (req(4, 32, 32, 32),), {}),
    ("interp", interp, lambda: (g(2, 16, 32, 32),), {}),
    ("logcumsumexp", logcumsumexp, lambda: (g(32, 2048),), {}),
    ("cumprod", cumprod, lambda: (g(64, 512) * 0.01 + 1,), {}),
    ("topk_route", topk_route, lambda: (g(256, 8), g(256, 64, seed=1)), {}),
    (
        "combo",
        combo,
        lambda: (g(512, 512), g(512, 256, seed=1), g(1024, seed=2)),
        {"options": {"combo_kernels": True}},
    ),
    ("big_red", big_red, lambda: (g(65536, 256, dtype=torch.float16),), {}),
    ("mean_var_bwd", mean_var_bwd, lambda: (req(4096, 384),), {}),
]
