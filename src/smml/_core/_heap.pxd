# The (key, index) order and the bounded max-heap on it: the k nearest of k-NN (_knn.pyx,
# _kdtree.pyx) and the SVM solver's most violating candidates (_svm_rows.pxd) keep their
# best entries in one. Written once, here, as inline functions so that each kernel's hot
# loop inlines them; cimport them, never copy them.
#
# Order: (a, ia) < (b, ib) when a < b, or a == b and ia < ib (the smaller index wins a tie).
from smml._core._typedefs cimport intp_t


ctypedef struct Pair:
    double key
    intp_t idx


cdef inline int cmp_pair(const void *a, const void *b) noexcept nogil:
    """qsort order on (key, index)."""
    cdef const Pair *p = <const Pair *> a
    cdef const Pair *q = <const Pair *> b
    if p.key < q.key:
        return -1
    if p.key > q.key:
        return 1
    if p.idx < q.idx:
        return -1
    if p.idx > q.idx:
        return 1
    return 0


cdef inline bint pair_less(double a, intp_t ia, double b, intp_t ib) noexcept nogil:
    """(a, ia) < (b, ib) in the order (key, index)."""
    return a < b or (a == b and ia < ib)


cdef inline void heap_push(double *vals, intp_t *idxs, intp_t *size, intp_t cap,
                           double v, intp_t i) noexcept nogil:
    """Push (v, i) into a max-heap on (key, index) of at most ``cap`` entries.

    The caller has checked that (v, i) belongs in the heap (heap not full, or
    (v, i) smaller than the root); a full heap drops its root.
    """
    cdef intp_t pos, parent
    if size[0] < cap:
        pos = size[0]
        size[0] += 1
        while pos > 0:
            parent = (pos - 1) >> 1
            if pair_less(vals[parent], idxs[parent], v, i):
                vals[pos] = vals[parent]
                idxs[pos] = idxs[parent]
                pos = parent
            else:
                break
        vals[pos] = v
        idxs[pos] = i
        return
    heap_sift_down(vals, idxs, cap, v, i)


cdef inline void heap_sift_down(double *vals, intp_t *idxs, intp_t n,
                                double v, intp_t i) noexcept nogil:
    """Put (v, i) in place of the root of a max-heap on (key, index) of n entries and
    sift it down (the root's old entry is overwritten)."""
    cdef intp_t pos = 0, child
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        if child + 1 < n and pair_less(vals[child], idxs[child], vals[child + 1], idxs[child + 1]):
            child += 1
        if pair_less(v, i, vals[child], idxs[child]):
            vals[pos] = vals[child]
            idxs[pos] = idxs[child]
            pos = child
        else:
            break
    vals[pos] = v
    idxs[pos] = i


cdef inline void heap_sort(double *vals, intp_t *idxs, intp_t size) noexcept nogil:
    """Sort a max-heap on (key, index) of ``size`` entries (as built by :func:`heap_push`)
    in place into increasing (key, index) order (heapsort: pop the root to the end)."""
    cdef intp_t n = size
    cdef double v
    cdef intp_t i
    while n > 1:
        n -= 1
        v = vals[n]
        i = idxs[n]
        vals[n] = vals[0]
        idxs[n] = idxs[0]
        heap_sift_down(vals, idxs, n, v, i)
