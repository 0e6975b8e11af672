# C-level declarations for the compiled twin of callstats.py (Cython's
# augmenting .pxd): the clock, and CallStats as a C type with C counters.
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec


cdef class CallStats:
    cdef public long long calls, ns, failed, rejected
    cdef public list hist
