# The growth frontier of the tree and boosting kernels (_tree.pyx, _gbm.pyx): leaves waiting
# to be split, a stack (depth-first) or a max-heap (best-first: the largest decrease first,
# ties to the smaller node id). The stack / heap holds small keys over a pool of Pending
# records that do not move (a Pending is 120 bytes: a heap of them moved 120 bytes per level
# of every push and pop). Node ids are unique, so the keys are totally ordered and the pop
# order is the same whatever the heap's layout.
from libc.stdlib cimport realloc, free
from libc.string cimport memset

from smml._core._typedefs cimport intp_t
from smml._core._criterion cimport SplitRecord

cdef struct Pending:
    intp_t node
    intp_t start
    intp_t end
    intp_t depth
    SplitRecord split


cdef struct FKey:
    double improvement       # the leaf's split's decrease
    intp_t node
    intp_t slot              # its Pending record in Frontier.pool


cdef struct Frontier:
    FKey* keys
    Pending* pool
    intp_t* free_slots
    intp_t size              # keys in the stack / heap
    intp_t used              # pool slots ever handed out
    intp_t n_free
    intp_t cap               # of keys, pool and free_slots


cdef inline bint frontier_before(const FKey* a, const FKey* b) noexcept nogil:
    """a is expanded before b (best-first): a larger decrease first, then the smaller node id."""
    if a.improvement > b.improvement:
        return True
    if a.improvement < b.improvement:
        return False
    return a.node < b.node


cdef inline void frontier_init(Frontier* F) noexcept nogil:
    memset(F, 0, sizeof(Frontier))


cdef inline int frontier_push(Frontier* F, const Pending* x, bint heap) noexcept nogil:
    """Add a copy of x: on top of the stack, or into the heap (0, or -1 when out of memory)."""
    cdef intp_t slot, i, parent, cap
    cdef FKey tmp
    cdef void* p
    if F.n_free > 0:
        F.n_free -= 1
        slot = F.free_slots[F.n_free]
    else:
        if F.used >= F.cap:
            cap = 2 * F.cap if F.cap > 0 else 64
            p = realloc(F.keys, cap * sizeof(FKey))
            if p == NULL: return -1
            F.keys = <FKey*>p
            p = realloc(F.pool, cap * sizeof(Pending))
            if p == NULL: return -1
            F.pool = <Pending*>p
            p = realloc(F.free_slots, cap * sizeof(intp_t))
            if p == NULL: return -1
            F.free_slots = <intp_t*>p
            F.cap = cap
        slot = F.used
        F.used += 1
    F.pool[slot] = x[0]
    i = F.size
    F.size += 1
    F.keys[i].improvement = x.split.improvement
    F.keys[i].node = x.node
    F.keys[i].slot = slot
    if not heap:
        return 0
    while i > 0:
        parent = (i - 1) // 2
        if frontier_before(&F.keys[i], &F.keys[parent]):
            tmp = F.keys[i]; F.keys[i] = F.keys[parent]; F.keys[parent] = tmp
            i = parent
        else:
            break
    return 0


cdef inline void frontier_pop(Frontier* F, Pending* out, bint heap) noexcept nogil:
    """Remove the top of the stack, or the heap's first, into out (F.size > 0)."""
    cdef intp_t i = 0, l, r, m, n, slot
    cdef FKey tmp
    F.size -= 1
    n = F.size
    if not heap:
        slot = F.keys[n].slot
    else:
        slot = F.keys[0].slot
        F.keys[0] = F.keys[n]
        while True:
            l = 2 * i + 1
            r = l + 1
            m = i
            if l < n and frontier_before(&F.keys[l], &F.keys[m]):
                m = l
            if r < n and frontier_before(&F.keys[r], &F.keys[m]):
                m = r
            if m == i:
                break
            tmp = F.keys[i]; F.keys[i] = F.keys[m]; F.keys[m] = tmp
            i = m
    out[0] = F.pool[slot]
    F.free_slots[F.n_free] = slot
    F.n_free += 1


cdef inline void frontier_free(Frontier* F) noexcept nogil:
    free(F.keys); free(F.pool); free(F.free_slots)
    memset(F, 0, sizeof(Frontier))
