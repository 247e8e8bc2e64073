"""The solver-status columns every learner may report (declared by the learner base).

A learner's ``solve_info_`` is a flat dict; the runner copies the keys declared here into the
cell's results row (`treebench.results.rows`) and keeps the rest in the cell file's
``solve_info``. The keys ``objective`` and ``objective_kind`` are the learner's own figure
and become the columns ``solver_objective`` and ``solver_objective_kind`` (`SOLVE_INFO_COLUMN`):
the value of the cell's problem, computed the same way for every learner, is
``problem_objective`` (`treebench.algorithms.objectives`). A learner with a further value
worth a column declares it when it registers (``@ALGORITHMS.register(name,
columns=(Column(...),))``, as GOSDT does with ``reference_bound``). This module imports no scikit-learn, so that the results schema reads
the declarations without loading any learner.
"""

from __future__ import annotations

from treebench.columns import Column, declare

SOLVE_INFO_COLUMNS = declare(
    "the learner (`solve_info_`)", "solver",
    ("optimal", "boolean", "whether the solver proved its tree optimal for its objective"),
    ("solver_objective", "Float64", "the learner's own figure for its tree (its solve info's "
     "`objective`), in the unit `solver_objective_kind` names; was `objective` in older "
     "results. Compare learners by `problem_objective`"),
    ("solver_objective_kind", "string", "what `solver_objective` measures (one of the "
     "solver objective kinds below); was `objective_kind` in older results"),
    ("bound", "Float64", "the solver's lower bound on its objective (empty after a "
     "lower-bound guess, whose bound is relative to the reference: the cell file keeps it as "
     "`guessed_bound`)"),
    ("gap", "Float64", "objective minus bound, as the solver reports it"),
    ("operations", "Int64", "the learner's own count of its unit of work (e.g. states "
     "expanded, splits scored)"),
    ("timed_out", "boolean", "whether the learner stopped at its time budget (its best tree "
     "so far is the result)"),
    ("time_to_best", "Float64", "seconds from the fit's start until its search first held "
     "its final tree (from its anytime trace, kept in the cell file)"),
    ("time_to_proof", "Float64", "seconds from the fit's start until its search's lower bound "
     "met its incumbent (empty when it never did)"),
    ("primal_integral", "Float64", "the search's primal integral (Berthold 2013) over the time "
     "limit (else the fit) against its own final objective, divided by that time: 0 = the "
     "final tree from the start, 1 = no tree until the end"),
)
#: the results columns that every learner may report through its ``solve_info_``
SOLVE_INFO_KEYS = tuple(c.name for c in SOLVE_INFO_COLUMNS)
#: the ``solve_info_`` keys whose column has another name: key -> column (the rest: the same)
SOLVE_INFO_COLUMN = {"objective": "solver_objective", "objective_kind": "solver_objective_kind"}

#: the results column of GOSDT's lower-bound guess: Theorem 4.3's right-hand side for the
#: returned tree (McTavish et al. 2022); a guessed run's objective is at most this for every
#: tree of its depth budget. `gosdt` and `gosdt-ref` report it in ``solve_info_`` and declare
#: the column when they register (declared here, beside the shared columns, so that neither
#: learner module has to import the other).
REFERENCE_BOUND = Column(
    "reference_bound", "Float64", "GOSDT's lower-bound guess: Theorem 4.3's right-hand side for "
    "the returned tree (McTavish et al. 2022)", "the learner (`solve_info_`)", "solver")


def bound_fields(bound: float, objective: float, guessed: bool) -> dict:
    """The ``solve_info_`` bound keys of a GOSDT search that ended with ``bound``. With a
    lower-bound guess the search's bound is relative to the reference (Theorem 4.3), not a
    lower bound on the objective of every tree, so ``bound``, ``lower_bound`` and ``gap`` are
    None (no valid bound is known) and the guessed bound and its gap are ``guessed_bound`` and
    ``guessed_gap`` (0 when the guessed search finished)."""
    if guessed:
        return {"bound": None, "lower_bound": None, "gap": None,
                "guessed_bound": bound, "guessed_gap": objective - bound}
    return {"bound": bound, "lower_bound": bound, "gap": objective - bound}
