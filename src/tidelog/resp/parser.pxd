# C-level names for the compiled twin of parser.py (Cython's augmenting
# .pxd: the .py uses them only in the typed walk, which only the compiled
# twin runs).
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.string cimport memcmp
