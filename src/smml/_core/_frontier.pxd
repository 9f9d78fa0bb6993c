# The growth frontier of the tree and boosting kernels (_tree.pyx, _gbm.pyx): leaves waiting
# to be split, a stack (depth-first) or a max-heap on (improvement, -node) (best-first: the
# largest decrease first, ties to the smaller node id).
from smml._core._typedefs cimport intp_t
from smml._core._criterion cimport SplitRecord

cdef struct Pending:
    intp_t node
    intp_t start
    intp_t end
    intp_t depth
    SplitRecord split


cdef inline bint frontier_before(const Pending* a, const Pending* b) noexcept nogil:
    """a is expanded before b (best-first): larger decrease, then smaller node id."""
    if a.split.improvement > b.split.improvement:
        return True
    if a.split.improvement < b.split.improvement:
        return False
    return a.node < b.node


cdef inline void frontier_push(Pending* h, intp_t* size, const Pending* x, bint heap) noexcept nogil:
    """Add x (room for it is the caller's): on top of the stack, or into the heap."""
    cdef intp_t i = size[0], parent
    cdef Pending tmp
    h[i] = x[0]
    size[0] += 1
    if not heap:
        return
    while i > 0:
        parent = (i - 1) // 2
        if frontier_before(&h[i], &h[parent]):
            tmp = h[i]; h[i] = h[parent]; h[parent] = tmp
            i = parent
        else:
            break


cdef inline void frontier_pop(Pending* h, intp_t* size, Pending* out, bint heap) noexcept nogil:
    """Remove the top of the stack, or the heap's first (frontier_before) into out."""
    cdef intp_t i = 0, l, r, m, n
    cdef Pending tmp
    size[0] -= 1
    n = size[0]
    if not heap:
        out[0] = h[n]
        return
    out[0] = h[0]
    h[0] = h[n]
    while True:
        l = 2 * i + 1
        r = l + 1
        m = i
        if l < n and frontier_before(&h[l], &h[m]):
            m = l
        if r < n and frontier_before(&h[r], &h[m]):
            m = r
        if m == i:
            break
        tmp = h[i]; h[i] = h[m]; h[m] = tmp
        i = m
