# A flag that any number of threads of a parallel region may set (an error one of them
# met: a failed allocation, a non-finite value) and that is read after the region ends.
# A plain store from several threads at once is a data race, undefined behaviour in C
# even when every thread stores the same value; this is an atomic store instead (relaxed:
# the region's closing barrier orders it before the read that follows). Reads inside the
# region go through flag_get. Platforms are guarded as in smml_platform.h.
#
#   cdef int failed = 0
#   with nogil, parallel(...):
#       ...
#       flag_set(&failed)          # not `failed = 1`: Cython would make it thread-private
#   if failed: ...
cdef extern from "smml_platform.h":
    void flag_set "smml_flag_set"(int *flag) noexcept nogil
    int flag_get "smml_flag_get"(int *flag) noexcept nogil
