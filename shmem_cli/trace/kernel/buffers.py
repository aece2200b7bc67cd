"""The content of a pointer argument's ``@FILE``: raw bytes, or the data of a NumPy ``.npy``.

Every size a file claims is checked before anything is read or allocated:

* only a regular file is read (a FIFO, a device such as ``/dev/zero`` or a folder is refused
  at once, never waited on or read without end), and at most :data:`MAX_FILE_BYTES` of it;
* a ``.npy`` header is read by NumPy's header parser (no pickles, no object arrays), and the
  array it describes (shape x item size) must be exactly the bytes that follow it: an 8 TiB
  shape in a 128-byte file is refused from the header, not allocated;
* an empty file, a ``.npz`` archive (a zip of arrays) and a ``.npy`` that is not one are
  refused with what to give instead.

Failures are :class:`BufferFileError` (a :class:`~shmem_cli.plumbing.errors.ShmemError`,
code ``invalid-launch``) naming the argument and the file.
"""

from __future__ import annotations

import io
from pathlib import Path

from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError, shorten

#: the most bytes one ``@FILE`` may hold, and all of a launch's files together
MAX_FILE_BYTES = 128 << 20
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"


class BufferFileError(ShmemError):
    """A buffer file that cannot be used (code ``invalid-launch``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid-launch")


def read_buffer(name: str, where: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes a pointer's buffer gets from the file ``name`` (``where``: ``--arg 0 (out)``)."""
    shown = shorten(name, 200)
    if not name:
        raise BufferFileError(f"{where}: '@' names no file (give @FILE.bin or @FILE.npy)")
    try:
        data = read_bounded(name, limit, what="buffer file", code="invalid-launch")
    except ShmemError as exc:
        raise BufferFileError(f"{where}: {_reason(exc.message, shown)}") from None
    suffix = Path(name).suffix.lower()
    if suffix == ".npz" or data.startswith(ZIP_MAGIC):
        raise BufferFileError(
            f"{where}: {shown} is a .npz archive (a zip of arrays), not one array: save the "
            "array alone with numpy.save (a .npy) or its raw bytes with tofile (a .bin)"
        )
    if suffix == ".npy" or data.startswith(NPY_MAGIC):
        return npy_data(data, f"{where}: {shown}")
    return data


def _reason(message: str, shown: str) -> str:
    """bounded_read's message with the file named: ``cannot read FILE: no such file``."""
    said = message.removeprefix("cannot read buffer file: ")
    return f"cannot read {shown}: {said}" if said != message else f"{shown}: the {message}"


def npy_data(data: bytes, where: str) -> bytes:
    """The array bytes of a ``.npy`` file's content, in C order, checked against its header."""
    import numpy as np
    from numpy.lib import format as npy

    if not data:
        raise BufferFileError(f"{where} is empty, not a NumPy array (a .npy starts with a header)")
    if not data.startswith(NPY_MAGIC):
        raise BufferFileError(
            f"{where} is not a NumPy .npy file (no \\x93NUMPY header); raw bytes go in a .bin"
        )
    stream = io.BytesIO(data)
    try:
        version = npy.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(stream)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = npy.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except Exception:  # NumPy's header parser: any failure means "not readable"
        raise BufferFileError(
            f"{where}: not a readable .npy header (NumPy cannot parse it); write the array "
            "with numpy.save, or give its raw bytes in a .bin"
        ) from None
    if dtype.hasobject or dtype.itemsize == 0:
        raise BufferFileError(
            f"{where}: an array of {shorten(str(dtype))} (objects or empty items) has no bytes "
            "to give a kernel; save numbers"
        )
    count = 1
    for n in shape:
        count *= int(n)
    claimed = count * dtype.itemsize
    left = len(data) - stream.tell()
    if claimed != left:
        raise BufferFileError(
            f"{where}: its header promises {claimed:,} bytes of data (shape {shorten(shape)}) "
            f"and the file holds {left:,}; the file is cut off or not a .npy"
        )
    array = np.frombuffer(data, dtype=dtype, count=count, offset=stream.tell())
    if fortran and len(shape) > 1:
        array = array.reshape(tuple(shape)[::-1]).T
    return bytes(np.ascontiguousarray(array).tobytes())
