"""Which optimisation problem each learner solves, and how to ask every learner for the same one.

Learners called "optimal" solve different problems: DL8.5 and STreeD (``cost_complexity=0``)
minimise training errors at a depth limit and return any such tree; Top-k's default (Figure 1 of
Blanc et al. 2023) splits every impure node and breaks ties towards fewer nodes, which is a
different problem; GOSDT minimises error rate + λ·leaves (McTavish et al. 2022, eq. 1); DPDT
minimises E + α·L (Kohler et al. 2025, eq. 2). Times and trees are comparable only between
learners solving the same problem on the same data, so every learner states its problem (in
the words of `PROBLEMS`), and a config entry may name a problem (``objective:``) to get the parameters that make the
learner solve it. The problems, the mapping per learner and the reasons are in
``docs/objectives.md``.

Each problem with a global objective states it (`PROBLEM_OBJECTIVES`, `objective_of`): its
unit and its weight (λ or α) for a parameter setting. `treebench.metrics.problem_objective`
computes it from the returned tree on the training rows, the same code for every learner, so
the rows of one problem compare by it (``problem_objective``) whatever the solver reports.

Each learner declares what it solves where it registers (``@ALGORITHMS.register(name,
solves=...)``: a `Solves`, or the name of a problem it always solves; built from `fixed`,
`by_cost` or a function of its own), beside its inputs, columns and warm-up; `declared` reads
that declaration for every consumer. A plug-in learner declares it the same way.

This module is pure Python (no numpy): the config layer uses it to translate an entry, the
listing shows it, and the runner records `problem_of` in every result row (``problem``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from treebench.columns import declare
from treebench.registry import ALGORITHMS

#: a problem name -> what it is (the words `treebench algorithms` and the docs use)
PROBLEMS: dict[str, str] = {
    "min-errors": "fewest (weighted) training errors among trees of depth <= max_depth; "
                  "any such tree (the solver's own tie rule)",
    "min-errors-then-nodes": "fewest training errors, then fewest nodes, among trees of depth "
                             "<= max_depth (a split that does not lower the error is a leaf)",
    "errors+lambda*leaves": "training error rate + lambda x leaves at a depth limit (GOSDT's "
                            "objective; a cost per branching node has the same minimiser)",
    "errors+alpha*path": "DPDT's weighted training errors + alpha x tests on the rows' paths "
                         "at a depth limit",
    "sse+alpha*path": "DPDT regression: weighted squared training error + alpha x tests on the "
                      "rows' paths at a depth limit",
    "topk-figure1": "Top-k, k = all (Figure 1): fewest training errors among trees that split "
                    "every impure node, then fewest nodes",
    "topk-search-space": "the most accurate tree of Top-k's search space for this k (not "
                         "optimal for k < number of features)",
    "candidate-split-dp": "DPDT's objective over a restricted set of candidate splits (not "
                          "optimal over all splits)",
    "guessed-bound": "GOSDT's objective relative to a reference model's lower-bound guess "
                     "(Theorem 4.3: at most the reference bound, not necessarily optimal)",
    "leaf-size-restricted": "the learner's objective among trees whose leaves hold at least "
                            "min_samples_leaf (min_sup) training rows (not optimal over all "
                            "trees)",
    "greedy": "top-down induction by a split criterion; no global objective",
    "lookahead": "greedy with a lookahead on the first levels; no global optimum",
    "ensemble": "an ensemble of trees; no tree objective",
    "rashomon-set": "every tree of depth <= max_depth whose error rate + lambda x leaves is "
                    "within a bound of the optimum (the Rashomon set); no single tree objective",
    "unstated": "the learner states no problem",
}

#: problems a config entry may ask for with ``objective:`` (the others are what a setting is)
ASKABLE = ("min-errors", "min-errors-then-nodes", "errors+lambda*leaves", "errors+alpha*path")

#: the common name of each askable problem's weight in a config entry's ``params``
PROBLEM_PARAMETER = {"errors+lambda*leaves": "lambda", "errors+alpha*path": "alpha"}


#: the objectives of the problems, by kind: what ``problem_objective`` measures on the returned
#: tree and the training rows (their sample weights), in the problem's own units
OBJECTIVES: dict[str, str] = {
    "errors": "weighted training errors: the summed sample weight of the misclassified "
              "training rows (with unit weights, their number)",
    "errors-then-nodes": "weighted training errors, then the tree's nodes "
                         "(`problem_tiebreak`): a tree is better with fewer errors, or as many "
                         "and fewer nodes",
    "error_rate+lambda*leaves": "weighted training errors / the training weight + lambda x "
                                "leaves (GOSDT's R)",
    "errors+alpha*path": "weighted training errors + alpha x the sum over training rows of "
                         "weight x tests on the row's path (DPDT's objective)",
    "sse+alpha*path": "weighted squared training error + alpha x the sum over training rows "
                      "of weight x tests on the row's path (DPDT regression)",
}

#: the objective kind of each problem that has a global objective (the others have none, or
#: are a restriction of one, `RESTRICTED`)
PROBLEM_OBJECTIVES: dict[str, str] = {
    "min-errors": "errors",
    "min-errors-then-nodes": "errors-then-nodes",
    "topk-figure1": "errors-then-nodes",
    "errors+lambda*leaves": "error_rate+lambda*leaves",
    "errors+alpha*path": "errors+alpha*path",
    "sse+alpha*path": "sse+alpha*path",
}

#: problems that search a restricted space (candidate splits, Top-k's k, a guessed bound) for
#: an objective: measured by the objective of the same learner without the restriction
#: (`Solves.unrestricted`), so their rows compare with the unrestricted problem's
RESTRICTED = ("topk-search-space", "candidate-split-dp", "guessed-bound", "leaf-size-restricted")


#: the results column this module fills (in the row's settings: it follows from the parameters,
#: so failed cells carry it too)
PROBLEM_COLUMNS = declare(
    "the learner's problem (`treebench.algorithms.objectives`)", "settings",
    ("problem", "string", "the problem the cell's learner and parameters solve "
     "(docs/objectives.md): compare objectives and times only between rows of one problem"),
)

#: the results columns of the problem's objective, computed from the returned tree
#: (`treebench.metrics.problem_objective`); empty for learners without a global objective
PROBLEM_OBJECTIVE_COLUMNS = declare(
    "the problem's objective (`treebench.metrics.problem_objective`)", "metrics",
    ("problem_objective", "Float64", "the problem's objective of the returned tree on the "
     "training rows, in the unit `problem_objective_kind` names, computed by treebench the "
     "same way for every learner: compare it between rows of one kind, weight and data"),
    ("problem_objective_kind", "string", "what `problem_objective` measures: errors, "
     "errors-then-nodes, error_rate+lambda*leaves, errors+alpha*path or sse+alpha*path "
     "(docs/objectives.md)"),
    ("problem_weight", "Float64", "the lambda or alpha in `problem_objective` (the learner's "
     "own parameter of that weight; 0 for objectives without one)"),
    ("problem_tiebreak", "Int64", "the second key of `errors-then-nodes`: the tree's nodes; "
     "order rows by `problem_objective`, then by this (empty for the other kinds)"),
)


@dataclass(frozen=True)
class Solves:
    """What one learner solves: ``problem(params)`` names the problem of a parameter setting
    (defaults filled in by the caller), ``asks`` maps each askable problem to the parameter
    values that make the learner solve it, ``weight`` names the learner's own parameter for
    the problem's weight (λ or α), if it has one, and ``unrestricted`` holds the parameter
    values that lift a restriction of its search space (`RESTRICTED`) and keep its
    objective."""

    problem: Callable[[Mapping[str, Any]], str]
    asks: Mapping[str, Mapping[str, Any]]
    weight: Mapping[str, str]
    unrestricted: Mapping[str, Any] = field(default_factory=dict)


def fixed(problem: str) -> Callable[[Mapping[str, Any]], str]:
    """The problem function of a learner that solves ``problem`` whatever its parameters."""
    return lambda p: problem


def by_cost(param: str) -> Callable[[Mapping[str, Any]], str]:
    """The problem function of a learner whose parameter ``param`` is a cost per leaf (λ) and
    whose ``lexicographic`` breaks ties by fewer nodes (STreeD, ConTree)."""
    def problem(p: Mapping[str, Any]) -> str:
        if p.get("lexicographic"):
            return "min-errors-then-nodes"
        return "errors+lambda*leaves" if float(p.get(param) or 0.0) > 0 else "min-errors"
    return problem


def leaf_size(problem: Callable[[Mapping[str, Any]], str],
              param: str) -> Callable[[Mapping[str, Any]], str]:
    """The problem function of a learner whose parameter ``param`` is the fewest training rows
    a leaf may hold: ``leaf-size-restricted`` above 1 (the optimum over such trees may have
    more errors than the optimum over all trees), else ``problem``'s. The learner's `Solves`
    lists ``param: 1`` in ``unrestricted``."""
    def restricted(p: Mapping[str, Any]) -> str:
        size = p.get(param)
        if isinstance(size, int | float) and not isinstance(size, bool) and size > 1:
            return "leaf-size-restricted"
        return problem(p)
    return restricted


def gosdt_problem(p: Mapping[str, Any]) -> str:
    """GOSDT's problem (treebench's solver and the reference one): its objective, or the
    guessed-bound restriction of it when a reference model's ``lb_guess`` is given."""
    if p.get("lexicographic"):
        return "min-errors-then-nodes" if p.get("lb_guess") is None else "guessed-bound"
    return "errors+lambda*leaves" if p.get("lb_guess") is None else "guessed-bound"


def declared(name: str) -> Solves:
    """What the learner ``name`` declares it solves when it registers (``solves=``: a `Solves`
    or a problem name of `PROBLEMS`); a learner that declares nothing (or is not registered)
    is "greedy" when its registry tags say so, else "unstated". Raise ValueError for a
    declaration that is neither."""
    if name not in ALGORITHMS:
        return Solves(fixed("unstated"), {}, {})
    entry = ALGORITHMS.get(name)
    said = entry.solves
    if said is None:
        return Solves(fixed("greedy" if "greedy" in entry.tags else "unstated"), {}, {})
    if isinstance(said, Solves):
        bad = sorted(set(said.asks) - set(ASKABLE))
        if bad:
            raise ValueError(f"learner `{name}` declares it may be asked for {bad[0]!r}; the "
                             f"problems a config may ask for are {', '.join(ASKABLE)}")
        return said
    if isinstance(said, str) and said in PROBLEMS:
        return Solves(fixed(said), {}, {})
    raise ValueError(f"learner `{name}` declares solves={said!r}: give a problem of "
                     f"treebench.algorithms.objectives.PROBLEMS ({', '.join(PROBLEMS)}) or a "
                     f"Solves")


def declarations() -> dict[str, Solves]:
    """Every registered learner's `declared` problems, by name (docs/objectives.md's table)."""
    return {e.name: declared(e.name) for e in ALGORITHMS}


def solves(name: str) -> Solves:
    """The mapping of the learner ``name`` (`declared`)."""
    return declared(name)


def problem_of(name: str, params: Mapping[str, Any], tags: tuple[str, ...] = ()) -> str:
    """The problem the learner ``name`` solves with ``params`` (its full parameter set).
    ``tags`` is accepted for callers that pass the entry's tags; the registry's are read."""
    return declared(name).problem(params)


@dataclass(frozen=True)
class Objective:
    """A problem's objective for one parameter setting: its ``kind`` (`OBJECTIVES`) and the
    ``weight`` (λ or α) its kind multiplies, 0.0 for kinds without one."""

    kind: str
    weight: float = 0.0


def objective_of(name: str, params: Mapping[str, Any],
                 tags: tuple[str, ...] = ()) -> Objective | None:
    """The objective of the problem the learner ``name`` solves with ``params`` (its full
    parameter set): a restricted problem (`RESTRICTED`) is measured by its learner's objective
    without the restriction; None for a problem without a global objective (greedy,
    lookahead, ensemble, unstated)."""
    problem = problem_of(name, params, tags)
    entry = solves(name)
    if problem in RESTRICTED:
        problem = problem_of(name, {**params, **entry.unrestricted}, tags)
    kind = PROBLEM_OBJECTIVES.get(problem)
    if kind is None:
        return None
    param = entry.weight.get(problem)
    return Objective(kind, float(params.get(param) or 0.0) if param else 0.0)


def askable(name: str) -> tuple[str, ...]:
    """The problems a config entry naming ``name`` may ask for."""
    return tuple(solves(name).asks)


def ask(name: str, problem: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` of a config entry (sweep axes allowed) with the settings that make the
    learner ``name`` solve ``problem``. The problem's weight is given under its common name
    (``lambda`` or ``alpha``, `PROBLEM_PARAMETER`) or the learner's own; a parameter the
    problem fixes may be written only with the value the problem needs. Raise ValueError with
    a sentence on a learner that cannot solve the problem or a conflicting parameter."""
    if problem not in PROBLEMS:
        raise ValueError(f"unknown objective {problem!r}; the objectives a config may ask for "
                         f"are {', '.join(ASKABLE)}")
    entry = solves(name)
    if problem not in entry.asks:
        can = ", ".join(entry.asks) or "none"
        raise ValueError(f"`{name}` cannot be asked for the objective {problem!r} (it can "
                         f"solve: {can})")
    out = dict(params)
    common = PROBLEM_PARAMETER.get(problem)
    own = entry.weight.get(problem)
    if common is not None and common in out and common != own:
        if own is not None and own in out:
            raise ValueError(f"give the weight of {problem!r} once, as `{common}` or as "
                             f"`{own}`, not both")
        if own is None:
            raise ValueError(f"`{name}` takes no weight for {problem!r}")
        out[own] = out.pop(common)
    for key, value in entry.asks[problem].items():
        if key in out and out[key] != value:
            raise ValueError(f"the objective {problem!r} sets `{key}` to {value!r} for "
                             f"`{name}`; remove `{key}` from params (it is {out[key]!r})")
        out[key] = value
    for key, value in entry.unrestricted.items():  # e.g. a leaf size, left as given when free
        if key in out and out[key] != value and key not in entry.asks[problem]:
            raise ValueError(f"the objective {problem!r} needs `{key}` at {value!r} for "
                             f"`{name}` ({out[key]!r} restricts its trees, which is another "
                             f"problem); remove `{key}` from params")
    return out
