# 000's majority vote ("The Nearest Neighbour algorithm") on class counts: the k-NN
# classifier's compiled votes (_knn.vote_uniform on the taken points, _kdtree.knn_votes in
# the search) take it from here, written once as an inline function; cimport it, never copy it.
from smml._core._typedefs cimport intp_t


cdef inline intp_t majority(const intp_t *votes, intp_t n_classes, intp_t default) noexcept nogil:
    """The class with the most votes, or ``default`` when several tie for the most."""
    cdef intp_t c, best = 0, nbest = 1
    for c in range(1, n_classes):
        if votes[c] > votes[best]:
            best = c
            nbest = 1
        elif votes[c] == votes[best]:
            nbest = nbest + 1
    return best if nbest == 1 else default
