"""Registries of algorithms, binarizers, dataset loaders, metrics and figure kinds.

Modules register their objects with a decorator (``@ALGORITHMS.register("cart", inputs=...)``;
scikit-learn's ensembles are registered by calling it; `treebench.metrics.register` and
`treebench.report.figures.register_figures` call it for metrics and figure kinds). The registry
imports the built-in modules the first time it is used, then the entry points of its group in
third-party packages (`ENTRY_POINT_GROUPS`: ``treebench.algorithms``, ``treebench.binarizers``,
``treebench.datasets``, ``treebench.metrics``, ``treebench.figures``); a plug-in that fails to
import is recorded in ``import_errors``, not raised. An entry whose optional dependency is
missing stays listed with the reason and raises `ConfigError` only when created. No if/elif on
names anywhere.

Algorithms declare the input kinds they accept (`INPUT_KINDS`: binary, numeric, categorical,
weights, multiclass, regression); config validation and cell expansion (through the one
pairing rule `accepts_binarization`), the estimators' own input checks and their scikit-learn
tags all read that one declaration. An algorithm that reports a solver value of its own as a
results column declares that column (``columns=``, `treebench.columns.Column`). The same call
declares the problem it solves (``solves=``), its warm-up (``warmup=``) and the functions
that compile its kernels (``precompile=``): one declaration per learner, a plug-in's included
(`Registry.register`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from treebench.errors import ConfigError, did_you_mean
from treebench.columns import Column
from treebench.utils.text import quote

#: what a learner may accept (declared with ``inputs=`` when registering it): 0/1 features,
#: real-valued features, categorical features as such, sample weights, more than two classes,
#: a real-valued target, missing values (NaN) in real-valued features, routed by the learner
#: itself (docs/missing-values.md). Every learner accepts 0/1 features and two classes.
INPUT_KINDS = ("binary", "numeric", "categorical", "weights", "multiclass", "regression", "missing")


#: (object, kind) -> its parameters and defaults, read from its signature once per process
_PARAMETERS: dict[tuple[Any, str], dict[str, Any]] = {}


@dataclass
class Entry:
    """One registered object: an estimator class, a binarizer class or a dataset loader."""

    name: str
    obj: Any
    kind: str
    requires: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    inputs: frozenset[str] = frozenset()  # algorithms: the `INPUT_KINDS` it accepts
    columns: tuple[Any, ...] = ()  # algorithms: results columns of their own (`Column`s)
    #: algorithms: the problem(s) it solves (`treebench.algorithms.objectives.declared`)
    solves: Any = None
    #: algorithms: called once per worker before any timed fit (compiles its kernels);
    #: `warmup_function` gives it, or the default when none is declared
    warmup: Callable[[], Any] | None = None
    #: algorithms: (group, "module:function") steps that fill numba's cache with its kernels
    #: (`treebench.execute.precompile`; steps of one group run in one process)
    precompile: tuple[tuple[str, str], ...] = ()

    @property
    def missing(self) -> list[str]:
        """Optional modules that this entry needs and that are not installed."""
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    @property
    def available(self) -> bool:
        return not self.missing

    def warmup_function(self) -> Callable[[], Any] | None:
        """The learner's warm-up: ``warmup=`` as declared; without it, a ``warmup`` defined on
        its class, else its module's ``warmup()`` function, else an inherited one
        (`treebench.algorithms.base` has one that does nothing); None when there is none."""
        if self.warmup is not None:
            return self.warmup
        cls = self.obj if inspect.isclass(self.obj) else None
        own = getattr(cls, "warmup", None) if cls and "warmup" in vars(cls) else None
        module = sys.modules.get(getattr(self.obj, "__module__", "") or "")
        for fn in (own, getattr(module, "warmup", None), getattr(cls, "warmup", None)):
            if callable(fn):
                return fn
        return None

    def parameters(self) -> dict[str, Any]:
        """Parameter names and defaults (from ``__init__`` or the loader's signature)."""
        try:
            key: Any = (self.obj, self.kind)
            known = _PARAMETERS.get(key)
        except TypeError:  # an unhashable loader object: read its signature each time
            key, known = None, None
        if known is None:  # read once per object: every cell asks
            target = self.obj.__init__ if inspect.isclass(self.obj) else self.obj
            known = {}
            for p in inspect.signature(target).parameters.values():
                if p.name in ("self",) or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    continue
                if self.kind == "dataset" and p.name in ("data_dirs", "offline", "cache_dir"):
                    continue
                known[p.name] = None if p.default is inspect.Parameter.empty else p.default
            if key is not None:
                _PARAMETERS[key] = known
        return dict(known)

    def create(self, **params: Any) -> Any:
        if self.missing:
            raise ConfigError(
                f"{self.kind} `{self.name}` needs the optional package(s) "
                f"{', '.join(self.missing)}; install them (e.g. `pip install treebench[peers]`)."
            )
        self.check_param_names(params)
        return self.obj(**params)

    def check_param_names(self, params: dict[str, Any], where: str = "") -> None:
        """Raise `ConfigError` for a parameter this entry does not take. ``where`` prefixes the
        message with the config key, e.g. ``"exp.yaml: key `algorithms[0].params"``."""
        known = self.parameters()
        unknown = sorted(set(params) - set(known))
        if unknown:
            bad = unknown[0]
            prefix = f"{where}.{bad}`: " if where else ""
            raise ConfigError(
                f"{prefix}{self.kind} `{self.name}` has no parameter `{bad}`{did_you_mean(bad, known)}; "
                f"its parameters are: {', '.join(known) or 'none'}."
            )


class Registry:
    """A name → Entry mapping filled by decorators in lazily imported modules."""

    def __init__(self, kind: str, builtin_modules: tuple[str, ...], entry_point_group: str,
                 builtin_names: dict[str, str] | None = None):
        self.kind = kind
        self._builtin = builtin_modules
        #: name -> the built-in module that registers it, so that looking up one name imports
        #: that module only (validating `cart` need not import every learner, numba and its
        #: kernels); names not listed here load everything
        self._where = dict(builtin_names or {})
        self._group = entry_point_group
        self._entries: dict[str, Entry] = {}
        self._loaded = False
        self.import_errors: dict[str, str] = {}

    def register(
        self,
        name: str,
        *,
        requires: tuple[str, ...] = (),
        tags: tuple[str, ...] = (),
        description: str | None = None,
        inputs: tuple[str, ...] | None = None,
        columns: tuple[Any, ...] = (),
        solves: Any = None,
        warmup: Callable[[], Any] | None = None,
        precompile: dict[str, Callable[[], Any] | tuple[Callable[[], Any], ...]] | None = None,
        **extra: Any,
    ) -> Callable[[Any], Any]:
        """Decorator registering ``obj`` under ``name``.

        An algorithm declares here all that it is, read by every consumer: the input kinds it
        accepts (``inputs``, `INPUT_KINDS`, `declare_inputs`), the results columns of its own
        (``columns``, `treebench.columns.Column`s of group ``solver``), the problem(s) it
        solves (``solves``: a problem name or a `treebench.algorithms.objectives.Solves`), its
        warm-up (``warmup``: called once per worker before any timed fit), the functions that
        compile its numba kernels into the cache (``precompile``: group name -> module-level
        function(s); `treebench.execute.precompile` runs each group in a process of its own)
        and the optional modules it needs (``requires``)."""

        def deco(obj: Any) -> Any:
            doc = description if description is not None else (inspect.getdoc(obj) or "")
            kinds = declare_inputs(obj, inputs) if self.kind == "algorithm" else frozenset()
            if warmup is not None and not callable(warmup):
                raise TypeError(f"`{name}`: warmup= takes a function, not "
                                f"{type(warmup).__name__}")
            self._entries[name] = Entry(
                name=name,
                obj=obj,
                kind=self.kind,
                requires=tuple(requires),
                tags=tuple(tags),
                description=" ".join(doc.strip().split("\n\n")[0].split()) if doc else "",
                extra=dict(extra),
                inputs=kinds,
                columns=_check_columns(name, columns),
                solves=solves,
                warmup=warmup,
                precompile=_precompile_steps(name, precompile or {}),
            )
            return obj

        return deco

    def add(self, entry: Entry) -> None:
        self._entries[entry.name] = entry

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for mod in self._builtin:
            importlib.import_module(mod)
        try:
            from importlib.metadata import entry_points

            for ep in entry_points(group=self._group):
                try:
                    ep.load()
                except Exception as exc:  # a broken plug-in is shown, not raised
                    self.import_errors[ep.name] = f"{type(exc).__name__}: {exc}"
        except Exception:  # pragma: no cover - metadata backend failure
            pass

    def _load_for(self, name: str) -> None:
        """Make ``name`` registered if it exists: import the one module the built-in names
        list for it, or else every module and plug-in."""
        if self._loaded:
            return
        mod = self._where.get(name)
        if mod is not None:
            importlib.import_module(mod)
            if name in self._entries:
                return
        self._load()

    def get(self, name: str) -> Entry:
        self._load_for(name)
        try:
            return self._entries[name]
        except KeyError:
            command = "datasets list" if self.kind == "dataset" else f"{self.kind}s"
            raise ConfigError(
                f"unknown {self.kind} {quote(str(name))}{did_you_mean(str(name), self._entries)}; "
                f"run `treebench {command}` to list them."
            ) from None

    def registered(self, name: str) -> bool:
        """Whether ``name`` is registered already (no module is imported to find out)."""
        return name in self._entries

    def __contains__(self, name: str) -> bool:
        self._load_for(name)
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        self._load()
        return iter(sorted(self._entries.values(), key=lambda e: e.name))

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def in_order(self) -> list[Entry]:
        """Every entry in registration order (built-in modules in their listed order, then the
        plug-ins): the order of metric columns and of figure kinds."""
        self._load()
        return list(self._entries.values())

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a toy object clean up with this)."""
        self._entries.pop(name, None)


def _check_columns(name: str, columns: tuple[Any, ...]) -> tuple[Any, ...]:

    bad = [c for c in columns if not isinstance(c, Column)]
    if bad:
        raise TypeError(f"`{name}`: columns= takes treebench.columns.Column objects, not "
                        f"{type(bad[0]).__name__}")
    return tuple(columns)


def _precompile_steps(name: str, groups: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """``{group: function or functions}`` → ``((group, "module:function"), ...)``; the
    functions must be module-level, so that a fresh process can import and call them."""
    steps = []
    for group, fns in groups.items():
        for fn in fns if isinstance(fns, tuple | list) else (fns,):
            qual = getattr(fn, "__qualname__", "")
            module = getattr(fn, "__module__", None)
            if not callable(fn) or not module or not qual or "." in qual or "<" in qual:
                raise TypeError(f"`{name}`: precompile= takes module-level functions, not "
                                f"{fn!r}")
            steps.append((str(group), f"{module}:{qual}"))
    return tuple(steps)


def declare_inputs(obj: Any, inputs: tuple[str, ...] | None) -> frozenset[str]:
    """The input kinds of an algorithm: ``inputs`` when given, else derived from the class
    (binary-only learners: ``binary_features_only = True``; regressors: ``regression``).

    For treebench's own estimators (classes with ``binary_features_only``) the declaration is
    also stored on the class as ``input_kinds``, and ``binary_features_only`` follows it, so
    that input validation and scikit-learn's tags (`TreeClassifierBase.__sklearn_tags__`) come
    from the same declaration."""
    from sklearn.base import RegressorMixin

    if inputs is None:
        binary_only = bool(getattr(obj, "binary_features_only", False))
        regressor = inspect.isclass(obj) and issubclass(obj, RegressorMixin)
        task = ("regression",) if regressor else ("multiclass",)
        inputs = ("binary", "weights", *task) + (() if binary_only else ("numeric",))
    kinds = frozenset(inputs)
    unknown = sorted(kinds - set(INPUT_KINDS))
    if unknown:
        raise ValueError(f"unknown input kind `{unknown[0]}`; known: {', '.join(INPUT_KINDS)}")
    if "binary" not in kinds:
        raise ValueError("every learner accepts 0/1 features: declare `binary` in inputs")
    if inspect.isclass(obj) and hasattr(obj, "binary_features_only"):
        obj.input_kinds = kinds
        obj.binary_features_only = "numeric" not in kinds
    return kinds


def accepts(entry: Entry, kind: str) -> bool:
    """Whether the algorithm ``entry`` accepts input of ``kind`` (one of `INPUT_KINDS`)."""
    if kind not in INPUT_KINDS:
        raise ValueError(f"unknown input kind `{kind}`; known: {', '.join(INPUT_KINDS)}")
    return kind in entry.inputs


def accepts_binarization(algorithm: str, method: str) -> bool:
    """The pairing rule: whether the learner ``algorithm`` accepts what the binarization
    ``method`` hands it (`binarizer_output`, checked with `accepts`). Config validation refuses
    a learner that no binarization of some dataset suits; cell expansion leaves the other
    unsuitable pairs out and reports them."""
    return accepts(ALGORITHMS.get(algorithm), binarizer_output(method))


def binarizer_output(name: str) -> str:
    """The input kind a binarizer produces: ``numeric`` for those registered with
    ``outputs="numeric"`` (``raw``), else ``binary``."""
    return BINARIZERS.get(name).extra.get("outputs", "binary")


def _names(by_module: dict[str, str]) -> dict[str, str]:
    """``{module: "name name ..."}`` → ``{name: module}`` (the built-in names of a registry;
    `tests/test_registry_lazy.py` checks them against what the modules register)."""
    return {n: mod for mod, names in by_module.items() for n in names.split()}


ALGORITHMS = Registry(
    "algorithm",
    (
        "treebench.algorithms.cart",
        "treebench.algorithms.ensembles",
        "treebench.algorithms.peers",
        "treebench.algorithms.greedy",
        "treebench.algorithms.topk",
        "treebench.algorithms.gosdt",
        "treebench.algorithms.ngi",
        "treebench.algorithms.testing",
        "treebench.algorithms.dpdt",
        "treebench.algorithms.dpdt_boost",
        "treebench.algorithms.peers_continuous",
        "treebench.algorithms.optimal_numeric",
        "treebench.algorithms.peers_pytrees",
        "treebench.algorithms.rashomon",
        "treebench.algorithms.peers_rashomon",
    ),
    "treebench.algorithms",
    _names({
        "treebench.algorithms.cart": "cart cart-regressor",
        "treebench.algorithms.ensembles": "gbdt random-forest",
        "treebench.algorithms.peers": "dl85 streed gosdt-ref",
        "treebench.algorithms.greedy": "greedy",
        "treebench.algorithms.topk": "topk",
        "treebench.algorithms.gosdt": "gosdt",
        "treebench.algorithms.ngi": "ngi ec4.5 ecart asr ip bal bal-fixed ngi-c4.5 ngi-cart cc4.5 ccart",
        "treebench.algorithms.testing": "test-sleep test-alloc test-abort test-raise test-kill-worker",
        "treebench.algorithms.dpdt": "dpdt dpdt-regressor",
        "treebench.algorithms.dpdt_boost": "dpdt-adaboost",
        "treebench.algorithms.peers_continuous": "contree licketysplit",
        "treebench.algorithms.optimal_numeric": "optimal-numeric",
        "treebench.algorithms.peers_pytrees": "pytrees-dl85 pytrees-contree",
        "treebench.algorithms.rashomon": "rashomon",
        "treebench.algorithms.peers_rashomon": "treefarms arborenum",
    }),
)

BINARIZERS = Registry(
    "binarizer", ("treebench.binarize",), "treebench.binarizers",
    _names({
        "treebench.binarize.kmeans": "kmeans",
        "treebench.binarize.onehot": "onehot",
        "treebench.binarize.passthrough": "none raw",
        "treebench.binarize.threshold_guess": "threshold-guess",
        "treebench.binarize.thresholds": "quantile midpoints bucketize",
    }),
)

DATASETS = Registry(
    "dataset",
    ("treebench.data.embedded", "treebench.data.catalog", "treebench.data.files", "treebench.data.generators"),
    "treebench.datasets",
    _names({  # catalog names (from the catalog files) load every module
        "treebench.data.embedded": "breast_cancer wine iris digits diabetes",
        "treebench.data.files": "file",
        "treebench.data.generators": "parity-noise tribes-majority xor2d spiral id3-exercise friedman1",
    }),
)

METRICS = Registry(
    "metric", ("treebench.metrics",), "treebench.metrics",
    _names({
        "treebench.metrics": "accuracy balanced_accuracy log_loss roc_auc roc_auc_ovo r2 mse "
                             "expected_tests expected_cost n_leaves n_leaves_effective n_nodes "
                             "depth fit_seconds fit_seconds_spread fit_cpu_seconds "
                             "compile_seconds "
                             "binarize_seconds prepare_seconds "
                             "peak_rss_mb cell_rss_mb",
    }),
)

FIGURES = Registry(
    "figure",
    ("treebench.report.figures", "treebench.report.comparison", "treebench.report.tradeoff",
     "treebench.report.time_accuracy", "treebench.report.solver_figures",
     "treebench.report.rashomon"),
    "treebench.figures",
    _names({
        "treebench.report.figures": "axis leaves",
        "treebench.report.comparison": "critical_difference pareto",
        "treebench.report.tradeoff": "lambda_tradeoff",
        "treebench.report.time_accuracy": "train_accuracy_vs_time",
        "treebench.report.solver_figures": "solvers_cactus solvers_profile solvers_gap",
        "treebench.report.rashomon": "rashomon_set",
    }),
)

#: kind -> its registry (the entry-point group of each is ``treebench.<kind>s``)
REGISTRIES = {"algorithm": ALGORITHMS, "binarizer": BINARIZERS, "dataset": DATASETS,
              "metric": METRICS, "figure": FIGURES}
#: the entry-point group of each registry
ENTRY_POINT_GROUPS = {kind: reg._group for kind, reg in REGISTRIES.items()}
