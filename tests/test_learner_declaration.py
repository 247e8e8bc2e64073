"""One declaration per learner: what `ALGORITHMS.register` is told (problem, warm-up,
precompile steps) is what the objectives, the runner and the precompile command read, for
built-in learners and for a learner registered from outside the package."""

from __future__ import annotations

import pytest

from treebench.algorithms import objectives as O
from treebench.algorithms.base import TreeClassifierBase
from treebench.execute import precompile
from treebench.execute.fit import warmup_for
from treebench.registry import ALGORITHMS


def _compile_toy() -> None:
    """A module-level precompile step."""


def _warm_toy() -> None:
    """A module-level warm-up."""


class _Toy(TreeClassifierBase):
    def __init__(self, depth: int = 1):
        self.depth = depth


@pytest.fixture
def toy():
    names = []

    def register(name, **declaration):
        names.append(name)
        ALGORITHMS.register(name, **declaration)(_Toy)
        return ALGORITHMS.get(name)

    yield register
    for name in names:
        ALGORITHMS.unregister(name)


def test_every_built_in_declaration_is_read_from_the_registry():
    for e in ALGORITHMS:
        solves = O.declared(e.name)  # raises for a declaration that names no problem
        assert solves.problem(e.parameters()) in O.PROBLEMS, e.name
        assert set(solves.asks) <= set(O.ASKABLE), e.name
    assert set(O.declarations()) == set(ALGORITHMS.names())


def test_the_precompile_groups_are_the_declared_steps():
    declared = {step for e in ALGORITHMS if e.available for _, step in e.precompile}
    assert {s for group in precompile.GROUPS for s in group} == declared
    assert "treebench.algorithms.topk:warmup" in precompile.GROUPS[0]
    assert warmup_for(ALGORITHMS.get("topk")).__module__ == "treebench.algorithms.topk"


def test_a_learner_registered_outside_declares_all_of_it(toy):
    solves = O.Solves(lambda p: "min-errors" if p.get("depth") == 1 else "greedy",
                      {"min-errors": {"depth": 1}}, {})
    entry = toy("toy-learner", solves=solves, warmup=_warm_toy,
                precompile={"toy-group": (_compile_toy, _warm_toy)})
    assert O.problem_of("toy-learner", {"depth": 1}) == "min-errors"
    assert O.problem_of("toy-learner", {"depth": 3}) == "greedy"
    assert O.ask("toy-learner", "min-errors", {"depth": 1}) == {"depth": 1}
    assert O.objective_of("toy-learner", {"depth": 1}) == O.Objective("errors", 0.0)
    assert warmup_for(entry) is _warm_toy
    steps = (f"{__name__}:_compile_toy", f"{__name__}:_warm_toy")
    assert entry.precompile == tuple(("toy-group", s) for s in steps)
    assert steps in precompile.declared_groups()


def test_a_problem_name_is_a_declaration_too(toy):
    toy("toy-fixed", solves="lookahead")
    assert O.problem_of("toy-fixed", {}) == "lookahead" and O.askable("toy-fixed") == ()
    toy("toy-tagged", tags=("greedy",))
    assert O.problem_of("toy-tagged", {}) == "greedy"
    toy("toy-silent")
    assert O.problem_of("toy-silent", {}) == "unstated"


def test_a_wrong_declaration_is_refused_with_the_learner_named(toy):
    toy("toy-wrong", solves="fastest")
    with pytest.raises(ValueError, match="learner `toy-wrong` declares solves='fastest'"):
        O.problem_of("toy-wrong", {})
    toy("toy-asks", solves=O.Solves(O.fixed("greedy"), {"fastest": {}}, {}))
    with pytest.raises(ValueError, match="may be asked for 'fastest'"):
        O.askable("toy-asks")
    with pytest.raises(TypeError, match="module-level functions"):
        toy("toy-lambda", precompile={"g": lambda: None})
    with pytest.raises(TypeError, match="warmup= takes a function"):
        toy("toy-warm", warmup="treebench.algorithms.topk:warmup")
