# C-level names for the compiled twin of encoder.py (Cython's augmenting
# .pxd: the .py uses them only under `if cython.compiled:`).
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.string cimport memcpy
