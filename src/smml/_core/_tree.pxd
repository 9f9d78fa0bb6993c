# The node record of smml's trees, shared by the growth kernel (_tree.pyx),
# prediction (_tree_predict.pyx) and Python (smml.tree.Tree holds one numpy array of
# these records; its dtype, _tree.NODE_DTYPE, is derived from this struct, so
# the two cannot disagree).
#
# Adding a node attribute: declare it here and fill it where the kernel creates
# or splits a node (_tree.pyx: _new_node / _grow).  Tree exposes every field of
# the record under its own name; nothing else lists the fields.
#
# A categorical test's set of codes is a row of NWORDS 64-bit words in the
# tree's category bits (MAXCAT and NWORDS are in _criterion.pxd).
from smml._core._typedefs cimport intp_t, int32_t, uint8_t


cdef packed struct Node:
    # the test, read by prediction: the first 18 bytes of the record
    double threshold            # numerical test: x[feature] <= threshold sends x to the first child
    int32_t feature             # tested feature (-1 at a leaf)
    int32_t children_left       # first child (-1 at a leaf); the second child is children_left + 1
    uint8_t is_categorical      # 1: the test is "x[feature] in S", S the node's row of the category bits
    uint8_t missing_left        # numerical test: 1 sends a missing x[feature] (NaN) to the first child,
                                # 0 to the second (boosting learns it; single trees reject NaN)
    # training statistics of the examples routed to the node
    double impurity             # psi at the node (regression: the weighted variance)
    double weighted_n_node_samples
    double improvement          # decrease of the training objective made by the node's split (0 at a leaf)
    intp_t n_node_samples
    int32_t depth


cdef inline void leaf_test(Node* nd) noexcept nogil:
    """The test fields of a leaf (no test, no children, no decrease); the kernels that create
    nodes (_tree.pyx, _gbm.pyx) set the statistics themselves."""
    nd.threshold = 0.0
    nd.feature = -1
    nd.children_left = -1
    nd.is_categorical = 0
    nd.missing_left = 0
    nd.improvement = 0.0
