"""The content of a pointer argument's ``@FILE``: raw bytes, or the data of a NumPy ``.npy``.

Every size a file claims is checked before anything is read or allocated:

* only a regular file is read (a FIFO, a device such as ``/dev/zero`` or a folder is refused
  at once, never waited on or read without end), and at most :data:`MAX_FILE_BYTES` of it;
* a ``.npy`` header is read by NumPy's header parser (no pickles, no object arrays), and the
  array it describes (shape x item size) must be exactly the bytes that follow it: an 8 TiB
  shape in a 128-byte file is refused from the header, not allocated;
* an empty file, a ``.npz`` archive (a zip of arrays) and a ``.npy`` that is not one are
  refused with what to give instead.

A ``.npy`` given to a pointer whose element type is known (``float *``, Triton's ``float16*``)
must hold elements of that kind and size: NumPy's default ``float64`` and ``int64`` arrays
(``np.random.randn``, ``np.arange``) given to a ``float *`` or an ``int *`` were read as twice
as many numbers of the wrong kind (a token id's high word read as the next id), silently.
One-byte arrays (raw bytes) and types not in :data:`ELEMENTS` are taken as they are.

Failures are :class:`BufferFileError` (a :class:`~shmem_cli.plumbing.errors.ShmemError`,
code ``invalid-launch``) naming the argument and the file.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ...cuda.launch.files import MAX_FILE_BYTES
from ...plumbing.bounded_read import Stamp, read_bounded, read_into, read_prefix, regular_stamp
from ...plumbing.errors import ShmemError, shorten

#: a file of at least this many bytes is not read when the launch is planned: the emulator's
#: memory reads it straight into place (:class:`FileBytes`)
IN_PLACE_BYTES = 1 << 20
_HEAD = 1 << 16  # the start of a file read to judge it (a .npy header fits)
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"


#: a pointer's element type -> the NumPy kind its .npy must hold ("f" float, "i" integer of
#: either sign), its bytes, and the NumPy type to save it as
ELEMENTS = {
    **{t: ("f", 2, "float16") for t in ("half", "__half", "float16")},
    "float": ("f", 4, "float32"),
    "double": ("f", 8, "float64"),
    **{t: ("i", 2, "int16") for t in ("short", "int16_t")},
    **{t: ("i", 2, "uint16") for t in ("unsigned short", "uint16_t")},
    **{t: ("i", 4, "int32") for t in ("int", "int32_t")},
    **{t: ("i", 4, "uint32") for t in ("unsigned", "unsigned int", "uint32_t")},
    **{t: ("i", 8, "int64") for t in ("long long", "int64_t")},
    **{t: ("i", 8, "uint64") for t in ("unsigned long long", "uint64_t")},
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict"}


def element_of(ctype: str | None) -> tuple[str, int, str] | None:
    """What :data:`ELEMENTS` says of a pointer type's element (``float const*``: float)."""
    if ctype is None or ctype.count("*") != 1 or not ctype.rstrip().endswith("*"):
        return None
    words = [w for w in ctype.replace("*", " ").split() if w not in _QUALIFIERS]
    return ELEMENTS.get(" ".join(words))


def check_element(dtype: Any, ctype: str | None, where: str) -> None:
    """Refuse a .npy whose elements the pointer ``ctype`` would read as another kind."""
    want = element_of(ctype)
    if want is None or dtype.itemsize == 1 or dtype.kind not in "fiu":
        return
    if ("f" if dtype.kind == "f" else "i", dtype.itemsize) == want[:2]:
        return
    kind = "floats" if want[0] == "f" else "integers"
    raise BufferFileError(
        f"{where} holds {dtype.name} ({dtype.itemsize} bytes an element) and the parameter is "
        f"{ctype}: the kernel would read its bytes as {want[1]}-byte {kind}; save it as "
        f"{want[2]} (numpy.save(FILE, a.astype(numpy.{want[2]}))), or give raw bytes in a .bin"
    )


class BufferFileError(ShmemError):
    """A buffer file that cannot be used (code ``invalid-launch``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid-launch")


def read_buffer(
    name: str, where: str, *, limit: int = MAX_FILE_BYTES, element: str | None = None
) -> bytes:
    """The bytes a pointer's buffer gets from the file ``name`` (``where``: ``--arg 0 (out)``;
    ``element``: the pointer's type where known, which a .npy's elements must fit)."""
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
        return npy_data(data, f"{where}: {shown}", element)
    return data


def _reason(message: str, shown: str) -> str:
    """bounded_read's message with the file named: ``cannot read FILE: no such file``."""
    said = message.removeprefix("cannot read buffer file: ")
    return f"cannot read {shown}: {said}" if said != message else f"{shown}: the {message}"


def npy_data(data: bytes, where: str, element: str | None = None) -> bytes:
    """The array bytes of a ``.npy`` file's content, in C order, checked against its header
    (and its elements against the pointer type ``element``, where given)."""
    import numpy as np

    if not data:
        raise BufferFileError(f"{where} is empty, not a NumPy array (a .npy starts with a header)")
    if not data.startswith(NPY_MAGIC):
        raise BufferFileError(
            f"{where} is not a NumPy .npy file (no \\x93NUMPY header); raw bytes go in a .bin"
        )
    start, shape, fortran, dtype, count = _npy_header(data, where)
    check_element(dtype, element, where)
    claimed = count * dtype.itemsize
    left = len(data) - start
    if claimed != left:
        raise BufferFileError(
            f"{where}: its header promises {claimed:,} bytes of data (shape {shorten(shape)}) "
            f"and the file holds {left:,}; the file is cut off or not a .npy"
        )
    array = np.frombuffer(data, dtype=dtype, count=count, offset=start)
    if fortran and len(shape) > 1:
        array = array.reshape(tuple(shape)[::-1]).T
    return bytes(np.ascontiguousarray(array).tobytes())


def _npy_header(data: bytes, where: str) -> tuple[int, Any, bool, Any, int]:
    """A ``.npy`` header at the start of ``data``: where the array's bytes start, its shape,
    whether it is in Fortran order, its dtype and its item count."""
    from numpy.lib import format as npy

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
    if any(int(n) < 0 for n in shape):  # NumPy's parser takes (-4,): "promises -16 bytes"
        raise BufferFileError(
            f"{where}: its header's shape {shorten(shape)} has a negative size, which no array "
            "has; write the array with numpy.save, or give its raw bytes in a .bin"
        )
    count = 1
    for n in shape:
        count *= int(n)
    return stream.tell(), shape, bool(fortran), dtype, count


class FileBytes:
    """Bytes [offset, offset + size) of a buffer file (as ``stamp`` found it, its size
    first: :func:`...plumbing.bounded_read.regular_stamp`), read only where they go
    (:meth:`into`): a large file is held once, in the emulator's memory, never also as a
    copy of its own (docs/robustness.md: the 1 GiB peak)."""

    __slots__ = ("name", "offset", "size", "stamp", "where")

    def __init__(self, name: str, where: str, offset: int, size: int, stamp: Stamp) -> None:
        self.name, self.where = name, where
        self.offset, self.size, self.stamp = offset, size, stamp

    def into(self, out: Any) -> None:
        """Read the bytes straight into ``out`` (a writable buffer of :attr:`size` bytes);
        a file that changed since the launch was planned is refused."""
        view = memoryview(out).cast("B")
        assert len(view) == self.size, "the buffer is the file's data, byte for byte"
        try:
            read_into(
                self.name, view, self.offset, self.stamp, what="buffer file",
                code="invalid-launch",
            )  # fmt: skip
        except ShmemError as exc:
            raise BufferFileError(
                f"{self.where}: {_reason(exc.message, shorten(self.name, 200))}"
            ) from None

    def read(self) -> bytes:
        """The bytes, read now."""
        out = bytearray(self.size)
        self.into(out)
        return bytes(out)


def buffer_source(
    name: str, where: str, element: str | None = None, *, limit: int = MAX_FILE_BYTES
) -> bytes | FileBytes:
    """What a pointer's buffer gets from the file ``name``: its bytes (:func:`read_buffer`),
    or for a file of :data:`IN_PLACE_BYTES` or more (raw, or a ``.npy`` in C order) where
    they lie in it, read later straight into the emulator's memory (:class:`FileBytes`)."""
    if name:
        what, code = "buffer file", "invalid-launch"
        try:
            stamp = regular_stamp(name, limit, what=what, code=code)
            large = stamp[0] >= IN_PLACE_BYTES
            head = read_prefix(name, _HEAD, what=what, code=code) if large else b""
        except ShmemError as exc:
            raise BufferFileError(f"{where}: {_reason(exc.message, shorten(name, 200))}") from None
        placed = _in_place(name, where, head, stamp, element) if head else None
        if placed is not None:
            return placed
    return read_buffer(name, where, limit=limit, element=element)


def _in_place(
    name: str, where: str, head: bytes, stamp: Stamp, element: str | None
) -> FileBytes | None:
    """Where a buffer file's data lie in it; None where it must be read whole (to be
    refused, or a Fortran-order array to reorder)."""
    size = stamp[0]
    suffix = Path(name).suffix.lower()
    if suffix == ".npz" or head.startswith(ZIP_MAGIC):
        return None
    if suffix != ".npy" and not head.startswith(NPY_MAGIC):
        return FileBytes(name, where, 0, size, stamp)
    try:
        start, shape, fortran, dtype, count = _npy_header(head, where)
    except BufferFileError:
        return None
    check_element(dtype, element, f"{where}: {shorten(name, 200)}")
    if (fortran and len(shape) > 1) or count * dtype.itemsize != size - start:
        return None
    return FileBytes(name, where, start, size - start, stamp)
