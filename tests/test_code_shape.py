"""The shape of the code: no function over 100 lines (numba kernels aside), and none with more
than 10 parameters (commands of ``treebench/cli.py`` aside, whose parameters are its options).

Lines are counted from the ``def`` line to the function's last line, docstring included.
Parameters count every positional, keyword-only, ``*args`` and ``**kwargs`` parameter, ``self``
and ``cls`` of methods excepted.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "treebench"

MAX_LINES = 100
MAX_PARAMETERS = 10

#: files and folders other engineers are rewriting now; checked again once that work is merged
#: (empty this tuple then)
_BEING_REWRITTEN: tuple[str, ...] = ()

#: decorators that compile a function with numba: a kernel is one loop nest over plain arrays,
#: and splitting it would cost calls in its hot loop
JIT_DECORATORS = {"njit", "jit", "vectorize", "guvectorize", "cfunc"}

_ESTIMATOR = "scikit-learn estimator: every hyperparameter is an explicit keyword of __init__ " \
             "(get_params, set_params and clone read them from its signature)"
#: functions allowed more than `MAX_PARAMETERS` parameters, with the reason
_ALLOWED_PARAMETERS = {
    ("treebench/algorithms/dpdt.py", "__init__"):
        "the one __init__ of DPDTClassifier and DPDTRegressor (their shared base `_DPDTMixin`): "
        + _ESTIMATOR,
    ("treebench/algorithms/rashomon.py", "__init__"): "RashomonClassifier: " + _ESTIMATOR,
}


def _decorator_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        names.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return names


def _n_parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return len(names) - (names[:1] in (["self"], ["cls"]))


def functions(source: str):
    """(name, first line, lines, parameters, is a numba kernel) of every function in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield (node.name, node.lineno, node.end_lineno - node.lineno + 1, _n_parameters(node),
                   bool(_decorator_names(node) & JIT_DECORATORS))


def _files() -> list[tuple[str, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(_BEING_REWRITTEN):
            out.append((rel, path.read_text(encoding="utf-8")))
    return out


def test_the_counts_are_those_of_the_source():
    src = "@njit(cache=True)\ndef k(a, b):\n    return a\n\nclass C:\n    def m(self, x, *y, z=1, **w):\n" \
          "        '''doc'''\n        return x\n"
    assert sorted(functions(src)) == [("k", 2, 2, 2, True), ("m", 6, 3, 4, False)]


def test_no_function_is_over_100_lines_outside_numba_kernels():
    long = [f"{rel}:{line} {name} ({n} lines)" for rel, src in _files()
            for name, line, n, _, kernel in functions(src) if n > MAX_LINES and not kernel]
    assert not long, f"split these into well-named helpers: {long}"


def test_no_function_has_more_than_10_parameters_outside_the_cli():
    many = [f"{rel}:{line} {name} ({p} parameters)" for rel, src in _files() if rel != "treebench/cli.py"
            for name, line, _, p, _ in functions(src)
            if p > MAX_PARAMETERS and (rel, name) not in _ALLOWED_PARAMETERS]
    assert not many, f"group these parameters into a dataclass or record: {many}"


def test_every_allowed_exception_still_needs_its_place():
    found = {(rel, name) for rel, src in _files() for name, _, _, p, _ in functions(src)
             if p > MAX_PARAMETERS}
    stale = sorted(set(_ALLOWED_PARAMETERS) - found)
    assert not stale, f"no longer over the limit: remove them from _ALLOWED_PARAMETERS: {stale}"


# ----------------------------------------------------------------------------- imports
#: third-party packages that take long to import; a module on a light path (the CLI's `--help`,
#: a rerun with nothing to do, `import treebench`) may import them, or a treebench module that
#: loads them, inside the function that needs them
HEAVY_PACKAGES = frozenset({
    "numpy", "pandas", "pyarrow", "matplotlib", "sklearn", "scipy", "numba", "dask", "distributed", "ray",
    "openml", "scikit_posthocs", "pydl85", "dl85", "gosdt", "pystreed", "pycontree", "licketysplit",
    "pydantic",  # 0.1 s: the config and claims schemas (typer loads it too, for every command)
})

#: files whose function-level treebench imports are allowed whatever they import, with the reason
_LAZY_FILES = {
    "treebench/cli.py": "the CLI boundary: each command imports what it calls, so `--help` and "
                        "fast commands load nothing they do not use",
}


def _module_of(rel: str) -> tuple[str, bool]:
    """(dotted module name, is a package) of a file path relative to the repository root."""
    parts = list(pathlib.PurePosixPath(rel).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement loads (relative imports made absolute); for
    ``from m import x`` both ``m`` and ``m.x`` (``x`` may be a submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module) -> tuple[list, list]:
    """(module-level, function-level) import statements of a parsed module; imports under
    ``if TYPE_CHECKING:`` load nothing and are left out."""
    top: list = []
    local: list = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (local if in_function else top).append(child)
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                          ast.Lambda)))
    walk(tree, False)
    return top, local


def _import_table() -> dict[str, dict]:
    """Per treebench module: its file, and the names its module-level and function-level
    imports load (with the line of each function-level one)."""
    table = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        module, is_package = _module_of(rel)
        top, local = _imports(ast.parse(path.read_text(encoding="utf-8")))
        table[module] = {
            "file": rel,
            "top": {n for node in top for n in _imported(node, module, is_package)},
            "local": [(node.lineno, _imported(node, module, is_package)) for node in local],
        }
    return table


def _heavy(table: dict[str, dict]) -> dict[str, frozenset[str]]:
    """The heavy packages each treebench module loads when imported: its own module-level
    imports, those of the treebench modules it imports there, and of their parent packages."""
    memo: dict[str, frozenset[str]] = {}

    def heavy(module: str, seen: frozenset[str]) -> frozenset[str]:
        if module in memo:
            return memo[module]
        out: set[str] = set()
        parents = [".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)]
        for name in sorted(table[module]["top"]) + parents:
            root = name.split(".")[0]
            if root in HEAVY_PACKAGES:
                out.add(root)
            elif root == "treebench" and name in table and name not in seen and name != module:
                out |= heavy(name, seen | {module})
        memo[module] = frozenset(out)
        return memo[module]

    return {m: heavy(m, frozenset()) for m in table}


def _target(table: dict[str, dict], names: list[str]) -> str | None:
    """The treebench module an import statement loads: its most specific module (``from m
    import x`` loads ``m.x`` when ``x`` is a submodule, else ``m``); None outside treebench."""
    name = max(names, key=len)
    if not name.startswith("treebench"):
        return None
    while name not in table:
        name = name.rpartition(".")[0]
    return name


def lazy_imports() -> list[tuple[str, int, str, str]]:
    """(file, line, imported module, why it is allowed or "") of every function-level import
    of a treebench module. Allowed: in `_LAZY_FILES`, or the imported module loads a heavy
    package that the importing module does not load itself."""
    table = _import_table()
    heavy = _heavy(table)
    out = []
    for module, info in table.items():
        for line, names in info["local"]:
            target = _target(table, names)
            if target is None or target == module:
                continue
            why = _LAZY_FILES.get(info["file"], "")
            extra = heavy[target] - heavy[module]
            if not why and extra:
                why = f"{target} loads {', '.join(sorted(extra))}, which {module} does not"
            out.append((info["file"], line, target, why))
    return out


def test_heavy_packages_are_found_through_imports():
    table = _import_table()
    heavy = _heavy(table)
    assert "pandas" in heavy["treebench.report.aggregate"]
    assert "sklearn" in heavy["treebench.algorithms.base"]
    assert not heavy["treebench.errors"] and not heavy["treebench.registry"]


def test_treebench_imports_are_at_module_top():
    """Internal imports sit at the top of the module, so the dependencies of a module are read
    in one place and an import cycle fails at once; a function may import a treebench module
    only to keep a heavy package off a light path (or in the CLI)."""
    inner = [f"{rel}:{line} imports {target}" for rel, line, target, why in lazy_imports()
             if not why]
    assert not inner, f"move these imports to the top of their module: {inner}"


# ----------------------------------------------------------------------------- private names
def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(rel: str, source: str) -> list[str]:
    """Where the module at ``rel`` uses a private name (``_x``) of another treebench module:
    ``from m import _x``, or ``m._x`` / ``C._x`` on a name imported from treebench. A private
    module (``_kernels.py``) is private to its package: modules of the same package import it."""
    module, is_package = _module_of(rel)
    package = module if is_package else module.rpartition(".")[0]
    imported: dict[str, str] = {}
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = _imported(node, module, is_package)[0]
            if not base.startswith("treebench"):
                continue
            for a in node.names:
                imported[a.asname or a.name] = f"{base}.{a.name}"
                if _is_private(a.name) and not (base == package and f"{base}.{a.name}" in _MODULES):
                    out.append(f"{rel}:{node.lineno} imports {a.name} from {base}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("treebench"):
                    imported[a.asname or a.name] = a.name
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = ast.unparse(node.value)
            if owner in imported or owner.startswith("treebench."):
                out.append(f"{rel}:{node.lineno} uses {owner}.{node.attr}")
    return out


_MODULES = {_module_of(p.relative_to(ROOT).as_posix())[0] for p in PACKAGE.rglob("*.py")}


def test_private_uses_are_found():
    src = ("from treebench.report.figures import _Job, Results\nfrom treebench import metrics\n"
           "from treebench.algorithms import _dpdt_solver\nx = metrics._auc(1) + Results._n\n")
    assert sorted(private_uses("treebench/report/tables.py", src)) == [
        "treebench/report/tables.py:1 imports _Job from treebench.report.figures",
        "treebench/report/tables.py:3 imports _dpdt_solver from treebench.algorithms",
        "treebench/report/tables.py:4 uses Results._n",
        "treebench/report/tables.py:4 uses metrics._auc",
    ]
    assert private_uses("treebench/algorithms/topk.py", src.splitlines()[2]) == []


def test_no_module_uses_a_private_name_of_another():
    """A leading underscore means "this module's own": a name another module needs is public
    (renamed) or moved to where both can import it."""
    found = [use for rel, src in _files() for use in private_uses(rel, src)]
    assert not found, f"make these names public or move them: {found}"
