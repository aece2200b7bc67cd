"""What the Triton labs' compiles without a GPU share (triton/mma36/lab/build_here.py,
triton/ops36/lab/build.py): Triton's driver replaced by one that names the target (sm_90),
and stand-ins for what the JIT reads of a tensor argument, so that ``kernel.warmup(...)``
specializes and compiles as the JIT does on the GPU machine (pointers and integers divisible
by 16, integers equal to 1 compiled in). Needs Triton (3.6), not PyTorch or a GPU; importing
this module installs the driver. A lab script puts this folder on ``sys.path`` (its
``parents[3] / "lab_common"``)."""

from triton.backends.compiler import GPUTarget
from triton.runtime import driver

ARCH = 90
#: bytes of an element of each dtype (a TensorDescriptor's strides)
ITEMSIZE = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float64": 8,
    "int32": 4,
    "int64": 8,
    "int8": 1,
    "uint8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int16": 2,
    "bool": 1,
}


class Dtype:
    def __init__(self, name):
        self.name = name
        self.itemsize = ITEMSIZE[name]

    def __str__(self):
        return "torch." + self.name


_DTYPES: dict = {}


class Tensor:
    """What the JIT reads of a tensor argument: its dtype and its (256-byte aligned) address."""

    def __init__(self, dtype):
        # one object per dtype, kept alive: the JIT caches what it read of a dtype by identity
        self.dtype = _DTYPES.setdefault(dtype, Dtype(dtype))

    def data_ptr(self):
        return 1 << 20


class _Target:
    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", ARCH, 32)

    def is_active(self):
        return True


driver.set_active(_Target())
