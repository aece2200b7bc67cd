"""Hopper's tensor units as the emulator sees them in shared memory: ``tma`` the box a tensor
memory accelerator copy moves and its swizzle; ``wgmma`` a warpgroup MMA's matrix
descriptors, the layout they describe, its operands' values and its measured cost. The
instructions themselves are the ``async_proxy`` and ``warpgroup`` families of ``ops/``."""
