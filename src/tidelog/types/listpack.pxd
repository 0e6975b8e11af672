# C-level names for the compiled twin of listpack.py (Cython's augmenting
# .pxd: the .py uses them only under `if cython.compiled:`).
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcpy
