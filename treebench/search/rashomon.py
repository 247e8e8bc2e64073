"""Rashomon sets: every tree of depth <= D whose objective is within a bound, enumerated into a
shared-subtree DAG, counted exactly and indexed without materialising the set.

Objective: GOSDT's, ``R(t) = (misclassified weight) / (total weight) + lam * leaves(t)`` (Lin et
al., ICML 2020, §3; McTavish et al., AAAI 2022, eq. (3)). The Rashomon set for a bound ``B`` is
``{t : depth(t) <= D, R(t) <= B}`` (Xin et al., NeurIPS 2022, TreeFARMS, Definition 3.1, with
``B = (1 + epsilon) * R(t*)``; a bound given directly is used as is).

Costs are whole numbers, and the bound is applied exactly: ``lam``, ``epsilon`` and a given
bound are read as the decimals they print as (`decimal`: 0.05 is 1/20, not the nearest binary
float), so a tree whose objective equals the bound in the decimal arithmetic of the definition is
in the set. In the unit that makes the sample weights whole (`whole_weights`, total ``W``) and
``lam = p / q``, a tree costs ``errors * A + leaves * P`` with ``A = q`` and ``P = p * W`` (both
divided by their gcd), its objective times ``A * W``; every sum and comparison is in Python
integers. (Rounding the price to a power-of-two grid, as the optimal searches do
(`price_grid`), moves trees at the bound in or out: with ``lam = 0.05`` on 8 rows, a lone leaf
of one error, 1/8 + 0.05 = 0.175, is 1.75 times a split of none, 2 * 0.05, and a grid price of
0.39999999999999858 errors per leaf left it out of the set at ``epsilon = 0.75``.)

Candidate splits of a node are (feature, left row set) pairs: a 0/1 column sends the rows with
``x = 0`` left; a numeric feature gives one candidate per distinct partition of the node's rows
``x <= t`` (thresholds at the midpoints between consecutive distinct values of the node's rows,
as `optimal-numeric` does). A split with an empty side is no candidate (it would only add a
leaf), and neither is a second threshold of one feature that gives the same partition.

The DAG: one node per (row set, depth budget) subproblem reached, holding the histogram of its
trees' costs (cost -> number of trees, up to the node's budget) and its alternatives: a leaf, or
a split ``(column, left rows, right rows)`` whose trees are the pairs of a left and a right tree
with summed cost within the budget (a truncated convolution of the children's histograms).
Trees of a node are ordered by cost, then by alternative, then by left cost, then by
(left index, right index) in mixed radix, so tree ``i`` is decoded top-down (`RashomonSet.tree`).
A split into two leaves that predict the same class is left out unless ``keep_redundant`` (a
tree with it predicts as the tree with one leaf there, for one leaf more: TreeFARMS' "trivial
extension", which its package leaves out). Whether a split is redundant depends on the label of
a leaf whose classes tie: ``leaf_ties="prior"`` (treebench's `majority_label`: the larger class
total, then the lower index) or ``"last"`` (the highest class index, TreeFARMS' rule); the
returned trees are labelled by the same rule. With ``keep_redundant`` the set does not depend on
the rule: it holds every tree within the bound.

Budgets: a child is searched with the parent's budget minus a lower bound of its sibling (a leaf
costs at least ``P``, a split at least ``2P``), then the left child with the parent's budget
minus the right child's optimum. A leaf's node, and on 0/1 columns a node of depth 1, is
searched whole instead (every tree of it, whatever the budget): a node holds its trees up to
its own budget, which may exceed the caller's, and every use of a histogram stops at the
caller's budget.

The search stops at a time limit or a node budget (the memory limit, at an estimated 8 bytes per
row-set word plus 600 bytes per node); the set then holds the trees of the root's alternatives
finished by then and says it is incomplete.
"""

from __future__ import annotations

import math
import random
import time
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from fractions import Fraction
from numbers import Integral

import numpy as np

from treebench.search.exactness import EXACT_SUM, whole_weights
from treebench.tree.arrays import BINARY_THRESHOLD, TreeBuilder
from treebench.tree.labels import majority_label

#: estimated bytes of one DAG node besides its row set (histogram, alternatives, dict entry)
NODE_BYTES = 600


class SearchStopped(Exception):
    """The enumeration reached its time or memory limit."""


@dataclass
class Node:
    """One subproblem: its rows, depth budget, cost budget, cost histogram and alternatives."""

    rows: int
    depth: int
    budget: int
    levels: list[int]  # distinct costs, ascending
    counts: list[int]  # trees at each cost
    leaf: int | None  # the leaf's cost when the leaf is in the set
    splits: list[tuple[int, int, int]]  # (column, left rows, right rows)
    _alt: dict = field(default_factory=dict)
    #: split alternatives whose leaf-leaf pair is left out (both leaves predict one class)
    redundant: set = field(default_factory=set)
    _by_cost: dict | None = field(default=None, repr=False)

    def by_cost(self) -> dict[int, int]:
        """The histogram as cost -> trees (built once, when a tree is first decoded)."""
        if self._by_cost is None:
            self._by_cost = dict(zip(self.levels, self.counts))
        return self._by_cost


@dataclass
class Problem:
    """The data of an enumeration, as Python-int bitsets.

    ``left[c]`` are the rows column ``c`` sends left; ``group[c]`` the original feature of the
    column; ``planes[k]`` the bit planes of class ``k``'s weights (``weight(rows & class k) =
    sum_b 2^b popcount(rows & planes[k][b])``)."""

    n: int
    left: list[int]
    group: list[int]
    planes: list[list[int]]
    A: int
    P: int
    total: int  # total weight in count units
    prior: np.ndarray | None = None  # the leaf labels' tie order (`tie_order`)
    #: rows -> (the cost of their leaf, the class it predicts), each computed once
    leaves: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._prior = None if self.prior is None else [float(v) for v in self.prior]
        #: with every count at most 1 (no sample weights), each class's rows: its one bit plane
        self._rows_of = ([pl[0] if pl else 0 for pl in self.planes]
                         if all(len(pl) <= 1 for pl in self.planes) else None)

    def class_weights(self, rows: int) -> list[int]:
        if self._rows_of is not None:  # one popcount a class, no sum over bit planes
            return [(rows & p).bit_count() for p in self._rows_of]
        return [sum((rows & p).bit_count() << b for b, p in enumerate(pl))
                for pl in self.planes]

    def leaf(self, rows: int) -> tuple[int, int]:
        """The cost of a leaf of ``rows`` and the class it predicts (`leaf_label`)."""
        got = self.leaves.get(rows)
        if got is None:
            w = self.class_weights(rows)
            got = self.leaves[rows] = ((sum(w) - max(w)) * self.A + self.P,
                                       leaf_label(w, self._prior))
        return got

    def label(self, rows: int) -> int:
        """The class a leaf of ``rows`` predicts (`majority_label`, ties by ``prior``)."""
        return self.leaf(rows)[1]

    def leaf_cost(self, rows: int) -> int:
        return self.leaf(rows)[0]


def leaf_label(weights: list[int], prior: list[float] | None) -> int:
    """`majority_label` of whole class weights in Python arithmetic: the class of the largest
    weight; among tied classes the larger ``prior``, then the lower index."""
    top = max(weights)
    best = -1
    for k, w in enumerate(weights):
        if w == top and (best < 0 or (prior is not None and prior[k] > prior[best])):
            best = k
    return best


def bits(mask: np.ndarray) -> int:
    """The rows where ``mask`` is true as one Python integer (bit i = row i)."""
    packed = np.packbits(np.asarray(mask, dtype=bool), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def count_units(sample_weight: np.ndarray) -> tuple[np.ndarray, float]:
    """Whole-number counts and the unit turning them back into the sample weights; raises
    ValueError for weights without a power-of-two unit in which they total at most 2^53."""
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.shape[0] and np.all(sw == sw[0]):
        return np.ones(sw.shape[0], dtype=np.int64), float(sw[0])
    whole = whole_weights(sw, EXACT_SUM)
    if whole is None:
        raise ValueError("the sample weights have no power-of-two unit in which they are whole "
                         "numbers totalling at most 2**53; the Rashomon set compares costs "
                         "exactly and needs such weights (whole numbers, halves, ...).")
    return whole[0].astype(np.int64), whole[1]


#: the labels of a leaf whose classes tie (`SetSpec.leaf_ties`)
LEAF_TIES = ("prior", "last")


def tie_order(class_totals: np.ndarray, leaf_ties: str) -> np.ndarray:
    """The ``prior`` of `majority_label` that implements ``leaf_ties``: the class totals
    ("prior": the larger total, then the lower index) or the class indices ("last": the highest
    index)."""
    if leaf_ties == "prior":
        return np.asarray(class_totals, dtype=np.float64)
    if leaf_ties == "last":
        return np.arange(len(class_totals), dtype=np.float64)
    raise ValueError(f"leaf_ties must be one of {LEAF_TIES}, not {leaf_ties!r}.")


def decimal(x: float) -> Fraction:
    """``x`` as the shortest decimal that prints it (Python's ``repr``: 0.05 is 1/20)."""
    return Fraction(repr(float(x)))


def make_problem(columns_left: np.ndarray, group: np.ndarray, y_index: np.ndarray,
                 counts: np.ndarray, n_classes: int, lam: float,
                 leaf_ties: str = "prior") -> Problem:
    """The problem for an (n, m) boolean matrix of "row goes left" per candidate column."""
    n = columns_left.shape[0]
    left = [bits(columns_left[:, c]) for c in range(columns_left.shape[1])]
    counts = np.asarray(counts, dtype=np.int64)
    top = int(counts.max()).bit_length() if n else 0
    planes = [[bits((y_index == k) & ((counts >> b) & 1 == 1)) for b in range(top)]
              for k in range(n_classes)]
    total = int(counts.sum())
    price = decimal(lam)
    A, P = price.denominator, price.numerator * total
    g = math.gcd(A, P)
    A, P = A // g, P // g
    prior = tie_order(np.bincount(y_index[y_index >= 0], weights=counts[y_index >= 0],
                                  minlength=n_classes), leaf_ties)
    return Problem(n, left, np.asarray(group, dtype=np.int64).tolist(), planes, A, P, total,
                   prior)


class Enumerator:
    """Top-down enumeration into the DAG (one instance per fit)."""

    def __init__(self, prob: Problem, max_nodes: int, deadline: float | None,
                 keep_redundant: bool = False, full_depth: int = 0):
        self.prob = prob
        self.keep_redundant = keep_redundant
        self.memo: dict[tuple[int, int], Node] = {}
        self.max_nodes = max_nodes
        self.deadline = deadline
        self.ticks = 0
        self.two_leaves = 2 * prob.P  # the least cost of a split
        #: a cost above every tree of depth <= 1 (every row misclassified, two leaves)
        self.shallow_full = prob.total * prob.A + 2 * prob.P + 1
        #: nodes of at most this depth (0 or 1) are searched whole, whatever the budget asked
        self.full_depth = full_depth

    def _check(self) -> None:
        self.ticks += 1
        if len(self.memo) >= self.max_nodes:
            raise SearchStopped("memory")
        if self.deadline is not None and self.ticks % 64 == 0 \
                and time.perf_counter() > self.deadline:
            raise SearchStopped("time")

    def candidates(self, rows: int):
        """(column, left rows, right rows) of every candidate split of ``rows``."""
        last_group, last = -1, 0
        group = self.prob.group
        for c, lc in enumerate(self.prob.left):
            g = group[c]
            lrows = rows & lc
            if g == last_group and lrows == last:
                continue  # a numeric feature's next threshold that splits these rows alike
            last_group, last = g, lrows
            if lrows == 0 or lrows == rows:
                continue
            yield c, lrows, rows ^ lrows

    def solve(self, rows: int, depth: int, budget: int, root: bool = False) -> Node:
        """The node of ``(rows, depth)`` holding every tree of cost <= ``budget``."""
        key = (rows, depth)
        node = self.memo.get(key)
        if node is not None and node.budget >= budget:
            return node
        if depth <= self.full_depth and not root:
            # A node of depth <= 1 has a tree per candidate split at most: searched with a
            # budget above all of them it is searched once, where the first call's budget had
            # it searched again each time a sibling left it a larger one (compas-binary depth 5:
            # 26,091 searches of 7,263 nodes before, 8,945 of 7,812 after; 25-45 % less time on
            # 0/1 data). A leaf (depth 0) always; depth 1 on 0/1 columns only: on numeric
            # features a node has a candidate per partition of its rows, and its whole
            # histogram made the convolutions above it larger (gosdt/spiral depth 3: 7.1 s to
            # 9.8 s; benchmarks/rashomon_speed.py)
            budget = self.shallow_full
        self._check()
        leaf = self.prob.leaf_cost(rows)
        hist: dict[int, int] = {}
        node = Node(rows, depth, budget, [], [], None, [])
        if leaf <= budget:
            hist[leaf] = 1
            node.leaf = leaf
        if depth > 0 and 2 * self.prob.P <= budget:
            # a lower bound of each child: its node's least cost when searched, else its leaf's
            # cost, at most a split's least cost (2P) when it may split. Written out for both
            # children: as a method call it made a numeric fit about 20 % slower (spiral,
            # depth 3, benchmarks/rashomon_speed.py)
            d1, two = depth - 1, self.two_leaves
            memo_get, leaf_get, leaf_of = self.memo.get, self.prob.leaves.get, self.prob.leaf
            try:
                for c, lrows, rrows in self.candidates(rows):
                    got = memo_get((lrows, d1))
                    if got is not None:
                        lb_l = got.levels[0] if got.levels else got.budget + 1
                    else:
                        lb_l = (leaf_get(lrows) or leaf_of(lrows))[0]
                        if d1 and two < lb_l:
                            lb_l = two
                    got = memo_get((rrows, d1))
                    if got is not None:
                        lb_r = got.levels[0] if got.levels else got.budget + 1
                    else:
                        lb_r = (leaf_get(rrows) or leaf_of(rrows))[0]
                        if d1 and two < lb_r:
                            lb_r = two
                    if lb_l + lb_r > budget:
                        continue
                    nr = self.solve(rrows, depth - 1, budget - lb_l)
                    if not nr.levels or lb_l + nr.levels[0] > budget:
                        continue
                    nl = self.solve(lrows, depth - 1, budget - nr.levels[0])
                    if not nl.levels or nl.levels[0] + nr.levels[0] > budget:
                        continue
                    conv = convolve(nl, nr, budget)
                    drop = self.redundant_pair(nl, nr, budget)
                    if drop:
                        v = nl.leaf + nr.leaf
                        conv[v] -= 1
                        if conv[v] == 0:
                            del conv[v]
                    if conv:
                        for v, k in conv.items():
                            hist[v] = hist.get(v, 0) + k
                        node.splits.append((c, lrows, rrows))
                        node._alt[len(node.splits) - 1] = conv
                        if drop:
                            node.redundant.add(len(node.splits) - 1)
            except SearchStopped:
                if not root:
                    raise
                node.levels = sorted(hist)
                node.counts = [hist[v] for v in node.levels]
                self.memo[key] = node
                raise
        node.levels = sorted(hist)
        node.counts = [hist[v] for v in node.levels]
        self.memo[key] = node
        return node


    def redundant_pair(self, nl: Node, nr: Node, budget: int) -> bool:
        """Whether the split of two leaves that predict the same class is in the histogram and
        to be left out (a tree with it predicts as the tree with one leaf there, for one leaf
        more; TreeFARMS leaves such trees out, ``keep_redundant`` keeps them). A leaf whose
        classes tie predicts by the problem's tie order (``SetSpec.leaf_ties``)."""
        if self.keep_redundant or nl.leaf is None or nr.leaf is None:
            return False
        if nl.leaf + nr.leaf > budget:
            return False
        return self.prob.label(nl.rows) == self.prob.label(nr.rows)


def convolve(nl: Node, nr: Node, budget: int) -> dict[int, int]:
    """Cost histogram of the pairs (left tree, right tree) with summed cost <= ``budget``."""
    rl, rc = nr.levels, nr.counts
    ll, lc = nl.levels, nl.counts
    # one cost on a side (a leaf alone, or trees of one cost: most pairs) is a shift of the
    # other side, whose costs then stay distinct
    if len(rl) == 1:
        b, kb = rl[0], rc[0]
        cut = bisect_right(ll, budget - b)
        return {a + b: ka * kb for a, ka in zip(ll[:cut], lc[:cut])}
    if len(ll) == 1:
        a, ka = ll[0], lc[0]
        cut = bisect_right(rl, budget - a)
        return {a + b: ka * kb for b, kb in zip(rl[:cut], rc[:cut])}
    out: dict[int, int] = {}
    get, first = out.get, rl[0]
    for a, ka in zip(ll, lc):
        room = budget - a
        if first > room:
            break
        for b, kb in zip(rl, rc):
            if b > room:
                break
            v = a + b
            out[v] = get(v, 0) + ka * kb
    return out


@dataclass
class RashomonSet:
    """The enumerated set: count, cost levels, trees by index, samples, predictions.

    ``bound`` is the cost bound (whole units) of the set, ``optimum`` the least cost found;
    ``complete`` is False when the search stopped at a limit (the set then holds the trees found
    before it stopped, every one of them within the bound). ``known`` is the least cost known
    before the search (the best lone leaf, or the given tree's if lower; -1 with a fixed
    bound): an incomplete set may hold no tree that good."""

    enum: Enumerator
    root: Node
    bound: int
    optimum: int
    complete: bool
    stop_reason: str | None
    unit: float  # weight per count unit
    n_classes: int
    prior: np.ndarray  # the leaf labels' tie order (`tie_order`)
    thresholds: np.ndarray  # per column
    X_numeric: np.ndarray | None  # training values of the original features (numeric input)
    known: int = -1

    # ---------------------------------------------------------------- counting
    def levels(self) -> tuple[list[int], list[int]]:
        """Distinct costs within the bound, ascending, and the number of trees at each."""
        cut = bisect_right(self.root.levels, self.bound)
        return self.root.levels[:cut], self.root.counts[:cut]

    @cached_property
    def count(self) -> int:
        """Number of trees in the set (a Python integer: exact at any size)."""
        return sum(self.levels()[1])

    def objective(self, cost: int) -> float:
        """A cost in whole units as the objective rate."""
        p = self.enum.prob
        return cost / (p.A * p.total)

    def exact_objective(self, cost: int) -> Fraction:
        """A cost in whole units as the objective rate, exactly."""
        p = self.enum.prob
        return Fraction(cost, p.A * p.total)

    def count_within(self, bound_cost: int) -> int:
        """Trees of the set with cost <= ``bound_cost`` (a smaller bound's set size)."""
        return sum(k for v, k in zip(*self.levels()) if v <= bound_cost)

    # ---------------------------------------------------------------- indexing
    def _alt_hist(self, node: Node, j: int) -> dict[int, int]:
        conv = node._alt.get(j)
        if conv is None:  # pragma: no cover - every split alternative keeps its histogram
            c, lrows, rrows = node.splits[j]
            conv = convolve(self._child(lrows, node.depth - 1),
                            self._child(rrows, node.depth - 1), node.budget)
            node._alt[j] = conv
        return conv

    def _child(self, rows: int, depth: int) -> Node:
        return self.enum.memo[(rows, depth)]

    def _decode(self, node: Node, level: int, idx: int, out: list) -> None:
        """Append the pre-order description of tree ``idx`` among the trees of ``node`` of cost
        ``level`` to ``out``: (column or -1, rows)."""
        if node.leaf is not None and node.leaf == level:
            if idx == 0:
                out.append((-1, node.rows))
                return
            idx -= 1
        for j, (c, lrows, rrows) in enumerate(node.splits):
            k = self._alt_hist(node, j).get(level, 0)
            if idx >= k:
                idx -= k
                continue
            nl = self._child(lrows, node.depth - 1)
            nr = self._child(rrows, node.depth - 1)
            right = nr.by_cost()
            for a, ka in zip(nl.levels, nl.counts):
                kb = right.get(level - a, 0)
                block = ka * kb
                skip = (j in node.redundant and a == nl.leaf and level - a == nr.leaf)
                if idx >= block - skip:
                    idx -= block - skip
                    continue
                idx += skip  # the left-out pair is (left leaf, right leaf): index 0 here
                out.append((c, node.rows))
                self._decode(nl, a, idx // kb, out)
                self._decode(nr, level - a, idx % kb, out)
                return
        raise IndexError("tree index past the node's trees")  # pragma: no cover

    def tree_nodes(self, i: int) -> list[tuple[int, int]]:
        """Tree ``i`` (0 <= i < count; ordered by cost) as pre-order (column or -1, rows)."""
        if isinstance(i, bool) or not isinstance(i, Integral):
            raise TypeError(f"a tree index is a whole number, not {i!r}")
        i = int(i)
        if not 0 <= i < self.count:
            raise IndexError(f"tree index {i} is outside the set of {self.count} trees")
        for v, k in zip(*self.levels()):
            if i < k:
                out: list = []
                self._decode(self.root, v, i, out)
                return out
            i -= k
        raise IndexError(i)  # pragma: no cover

    def tree(self, i: int):
        """Tree ``i`` as `TreeArrays` (class counts of the training rows at every node)."""
        nodes = self.tree_nodes(i)
        prob = self.enum.prob
        b = TreeBuilder(self.n_classes)
        pos = 0

        def build() -> int:
            nonlocal pos
            c, rows = nodes[pos]
            pos += 1
            value = np.asarray(prob.class_weights(rows), dtype=np.float64) * self.unit
            label = majority_label(value, self.prior)
            if c < 0:
                return b.add_leaf(value, label)
            nid = b.add_split(int(prob.group[c]), self._threshold(c, rows), value, label)
            left = build()
            b.set_children(nid, left, build())
            return nid

        build()
        return b.build()

    def _threshold(self, c: int, rows: int) -> float:
        if self.X_numeric is None:
            return BINARY_THRESHOLD
        f = int(self.enum.prob.group[c])
        mask = np.unpackbits(np.frombuffer(rows.to_bytes((self.enum.prob.n + 7) // 8, "little"),
                                           dtype=np.uint8), bitorder="little")
        mask = mask[: self.enum.prob.n].astype(bool)
        x = self.X_numeric[mask, f]
        t = self.thresholds[c]
        lo = x[x <= t].max()
        hi = x[x > t].min()
        return float(lo + (hi - lo) / 2.0)

    def sample(self, n: int, seed: int | None = None) -> list[int]:
        """``n`` tree indices drawn uniformly without replacement (all of them, in order, when
        the set has at most ``n`` trees)."""
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 0:
            raise ValueError(f"the number of trees to sample is a whole number >= 0, not {n!r}")
        total = self.count
        if total <= n:
            return list(range(total))
        return sorted(random.Random(seed).sample(range(total), int(n)))


def feature_column(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidate columns of one numeric feature: thresholds at the midpoints between its
    consecutive distinct values, and the (n, k) "x <= t" matrix."""
    vals = np.unique(x)
    if vals.shape[0] < 2:
        return np.zeros(0), np.zeros((x.shape[0], 0), dtype=bool)
    mids = vals[:-1] + (vals[1:] - vals[:-1]) / 2.0
    return mids, x[:, None] <= mids[None, :]


@dataclass(frozen=True)
class SetSpec:
    """What to enumerate: depth budget, price per leaf, bound, feature kind and limits."""

    depth: int
    lam: float
    epsilon: float | None = None  # the bound is (1 + epsilon) * optimum ...
    bound: float | None = None  # ... or this objective value
    binary: bool = True  # 0/1 columns; else raw numeric features at midpoints
    max_nodes: int = 10**6
    deadline: float | None = None  # a `time.perf_counter` time
    keep_redundant: bool = False  # count splits into two leaves that predict one class
    leaf_ties: str = "prior"  # a tied leaf's label: "prior" (treebench) or "last" (TreeFARMS)


def enumerate_set(X: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray, n_classes: int,
                  spec: SetSpec, upper_tree: tuple[float, int] | None = None) -> RashomonSet:
    """Enumerate the Rashomon set of ``X`` (0/1 columns when ``spec.binary``, else raw numeric
    features at midpoint thresholds) for the objective ``error rate + spec.lam * leaves``.

    The bound is ``(1 + spec.epsilon) * optimum`` or ``spec.bound`` (objective units).
    ``upper_tree``, the (misclassified weight, leaves) of some tree of depth <= ``depth`` (an
    optimal solver's), makes the relative bound's search start tight; without it the search
    starts from the best single leaf. Either way the final bound is ``(1 + epsilon)`` times the
    least cost found."""
    X = np.asarray(X)
    depth, lam, epsilon, bound = spec.depth, spec.lam, spec.epsilon, spec.bound
    n, d = X.shape
    counts, unit = count_units(sample_weight)
    keep = counts > 0
    if spec.binary:
        left = (X == 0)
        group = np.arange(d)
        thresholds = np.full(d, BINARY_THRESHOLD)
        Xn = None
    else:
        cols, groups, thr = [], [], []
        for f in range(d):
            mids = feature_column(X[keep, f])[0] if keep.any() else np.zeros(0)
            if mids.shape[0]:
                cols.append(X[:, f][:, None] <= mids[None, :])
                groups.extend([f] * mids.shape[0])
                thr.extend(mids.tolist())
        left = np.hstack(cols) if cols else np.zeros((n, 0), dtype=bool)
        group = np.asarray(groups, dtype=np.int64)
        thresholds = np.asarray(thr, dtype=np.float64)
        Xn = np.asarray(X, dtype=np.float64)
    prob = make_problem(left & keep[:, None], group, np.where(keep, y_index, -1),
                        np.where(keep, counts, 0), n_classes, lam, spec.leaf_ties)
    root_rows = bits(keep)
    scale = prob.A * prob.total
    enum = Enumerator(prob, spec.max_nodes, spec.deadline, spec.keep_redundant,
                      full_depth=1 if spec.binary else 0)
    start = -1
    if bound is not None:
        B = math.floor(decimal(bound) * scale)
    else:
        start = prob.leaf_cost(root_rows)
        if upper_tree is not None:
            errors = round(float(upper_tree[0]) / unit)
            start = min(start, errors * prob.A + int(upper_tree[1]) * prob.P)
        B = math.floor(start * (1 + decimal(epsilon)))
    complete, reason = True, None
    try:
        root = enum.solve(root_rows, depth, B, root=True)
    except SearchStopped as stop:
        complete, reason = False, str(stop)
        root = enum.memo.get((root_rows, depth)) or Node(root_rows, depth, B, [], [], None, [])
    opt = root.levels[0] if root.levels else None
    final = B
    if bound is None and opt is not None:
        final = min(B, math.floor(opt * (1 + decimal(epsilon))))
    return RashomonSet(enum, root, final, opt if opt is not None else -1, complete, reason,
                       unit, n_classes, prob.prior, thresholds, Xn, known=start)
