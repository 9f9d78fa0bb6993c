"""The fitted tree record of :mod:`smml.tree` (:class:`Tree`): the node records the growth
kernels write and the prediction kernels read."""
from __future__ import annotations

from typing import Any

from numpy.typing import NDArray

import numpy as np

from smml._core import _tree

__all__ = ["Tree"]

#: the category bits of a tree without a categorical test: one row of zeros, shared (no node
#: reads its row; prediction reads a node's row only when the node tests categories)
_NO_BITS = np.zeros((1, _tree.CATEGORY_WORDS), np.uint64)
_NO_BITS.flags.writeable = False


def _compact_bits(nodes, bits):
    """``bits`` as a tree keeps them: ``_NO_BITS`` when no node tests categories and no bit is
    set (32 bytes a node less: most trees), else as they are."""
    if len(bits) > 1 and not nodes["is_categorical"].any() and not bits.any():
        return _NO_BITS
    return bits


class Tree:
    """A fitted tree: one numpy array of node records and two side arrays (node 0 is the root).

    ``nodes`` has the dtype ``Tree.NODE_DTYPE``: the growth kernel's ``Node`` record
    (``smml/_core/_tree.pxd``), which prediction reads as it is.  Each of its fields is also an
    attribute (``tree.feature`` is ``tree.nodes["feature"]``): ``threshold``, ``feature``,
    ``children_left`` (-1 marks leaves), ``is_categorical``, ``impurity`` (psi at the node),
    ``weighted_n_node_samples``, ``improvement`` (the decrease of the training objective made by
    the node's split; with ``split_score="002"``, 002's score of the split), ``n_node_samples``,
    ``depth``.  ``children_left[v]`` is the first child
    (test true); the second child is stored right after it, ``children_right[v] =
    children_left[v] + 1``.  The test is ``x[feature] <= threshold`` unless ``is_categorical[v]``,
    when it is ``x[feature] in S`` with S the categories whose bit is set in
    ``category_bits[v]`` (4 x 64 bits; a tree without a categorical test keeps no bits, and
    ``category_bits`` is then a read-only view of zeros).  ``value`` (n_nodes, V) holds the
    weighted class counts (classifier) or the mean target (regressor) of the training examples
    routed to each node.

    Parameters
    ----------
    nodes : ndarray of dtype ``Tree.NODE_DTYPE``, shape (n_nodes,)
        The node records (node 0 the root; each internal node's children after it, siblings
        adjacent).
    value : ndarray of shape (n_nodes, V)
        Weighted class counts (classifier) or mean target (regressor) of each node.
    category_bits : ndarray of uint64, shape (n_nodes, 4)
        The category set S of each categorical test, as bits.

    See Also
    --------
    sklearn.tree._tree.Tree : scikit-learn's fitted tree structure (``tree_``).

    Examples
    --------
    >>> from smml.tree import TreeClassifier
    >>> clf = TreeClassifier().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    >>> t = clf.tree_
    >>> t.node_count, t.n_leaves, t.max_depth
    (3, 2, 1)
    >>> int(t.feature[0]), float(t.threshold[0])
    (0, 1.5)
    >>> t.children_left.tolist(), t.children_right.tolist()
    ([1, -1, -1], [2, -1, -1])
    """

    NODE_DTYPE = _tree.NODE_DTYPE
    _FIELDS = NODE_DTYPE.names + ("children_right", "value", "category_bits")

    def __init__(self, nodes: NDArray[Any], value: NDArray[np.float64], category_bits: NDArray[np.uint64]) -> None:
        self.nodes, self.value, self._bits = self._checked(nodes, value, category_bits)
        self._derive()

    @classmethod
    def _checked(cls, nodes, value, category_bits):
        """The arrays as stored, after the checks that keep prediction (which walks the
        records without bounds checks) inside them; also run on unpickling / smml.load."""
        nodes = np.ascontiguousarray(nodes)
        if not isinstance(nodes, np.ndarray) or nodes.dtype != cls.NODE_DTYPE or nodes.ndim != 1 \
                or len(nodes) == 0:
            raise ValueError(f"tree nodes must be a non-empty 1-d array of dtype {cls.NODE_DTYPE}")
        m = len(nodes)
        category_bits = np.ascontiguousarray(category_bits, dtype=np.uint64)
        # category_bits: a row per node, or one row of zeros (a tree without categorical tests)
        no_bits = category_bits.shape == (1, _tree.CATEGORY_WORDS) and not category_bits.any() \
            and not nodes["is_categorical"].any()
        if len(value) != m or (category_bits.shape != (m, _tree.CATEGORY_WORDS) and not no_bits):
            raise ValueError("tree nodes, value and category_bits must have one row per node")
        left = nodes["children_left"]
        internal = np.flatnonzero(left >= 0)
        if np.any(left[internal] <= internal) or np.any(left[internal] >= m - 1) or np.any(left < -1):
            # prediction walks the records without bounds checks: children follow their parent
            raise ValueError("tree nodes: children_left must be -1 or a node after its parent with its "
                             "sibling right after it")
        if np.any(nodes["feature"][internal] < 0):
            raise ValueError("tree nodes: an internal node tests a negative feature index")
        return nodes, value, _compact_bits(nodes, category_bits)

    @classmethod
    def _grown(cls, nodes, value, category_bits):
        """A tree as a growth kernel returns it, without _checked's checks: the kernels
        number children after their parent, siblings adjacent, by construction (every
        tree of a boosting fit passes _checked in tests/test_gradient_boosting.py).  Boosting makes one tree per
        round; the checks cost more than growing a small tree."""
        tree = cls.__new__(cls)
        tree.nodes, tree.value, tree._bits = nodes, value, _compact_bits(nodes, category_bits)
        tree._derive()
        return tree

    def _derive(self):
        self._bytes = self.nodes.view(np.uint8)
        self._right = None                  # children_right, made when first asked for

    def _records(self):
        """The node records as bytes, for the prediction kernels (smml._core._tree_predict)."""
        return self._bytes

    @property
    def category_bits(self) -> NDArray[np.uint64]:
        """(n_nodes, 4) the category set of each categorical test, as bits (read-only zeros when
        the tree has no categorical test: none are stored)."""
        if len(self._bits) == len(self.nodes):
            return self._bits
        return np.broadcast_to(self._bits, (len(self.nodes), _tree.CATEGORY_WORDS))

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_bytes"], state["_right"]         # derived from nodes: rebuilt on load
        state["category_bits"] = state.pop("_bits")  # (1, 4) zeros: no categorical test
        return state

    def __setstate__(self, state):
        # a loaded file is checked as a new tree is: a crafted record must not send the
        # prediction walk outside the arrays
        state = dict(state)
        try:
            # (a state from __getstate__ has "category_bits"; the attributes' own name is "_bits")
            bits = state.pop("category_bits") if "category_bits" in state else state.pop("_bits")
            state["nodes"], state["value"], state["_bits"] = self._checked(state["nodes"], state["value"], bits)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"tree state is incomplete or malformed: {exc}") from None
        self.__dict__.update(state)
        self._derive()

    @property
    def children_right(self) -> NDArray[np.intp]:
        """Second child of each node (-1 at leaves): children_left + 1 (read-only)."""
        if self._right is None:
            left = self.nodes["children_left"]
            right = np.where(left >= 0, left + 1, -1).astype(np.intp)
            right.flags.writeable = False
            self._right = right
        return self._right

    @property
    def node_count(self) -> int:
        """Number of nodes (internal nodes and leaves)."""
        return int(self.nodes.shape[0])

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.sum(self.children_left < 0))

    @property
    def max_depth(self) -> int:
        """Depth of the deepest node (0 for a single leaf)."""
        return int(self.depth.max()) if self.node_count else 0

    def _subtree(self, keep_leaf):
        """Copy with the nodes in ``keep_leaf`` turned into leaves, unreachable nodes dropped
        (nodes renumbered in creation order: siblings stay adjacent)."""
        left = self.children_left.copy()
        left[keep_leaf] = -1
        reach = np.zeros(self.node_count, bool)
        reach[0] = True
        for v in range(self.node_count):           # parents precede children
            if reach[v] and left[v] >= 0:
                reach[left[v]] = reach[left[v] + 1] = True
        new_id = np.cumsum(reach) - 1
        nodes = self.nodes[reach]
        bits = self.category_bits[reach]
        l = left[reach]
        nodes["children_left"] = np.where(l >= 0, new_id[np.maximum(l, 0)], -1)
        _tree.make_leaves(nodes.view(np.uint8), bits, np.flatnonzero(l < 0))
        return Tree(nodes, self.value[reach], bits)


def _node_field(name):
    def field(self) -> NDArray[Any]:
        return self.nodes[name]

    return property(field, doc=f"``nodes[{name!r}]``")


for _name in Tree.NODE_DTYPE.names:
    setattr(Tree, _name, _node_field(_name))
