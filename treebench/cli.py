"""The `treebench` command line: parse, call the API, print.

Of treebench it imports only the API (`treebench.api`; `treebench.api_light`, what answers
without loading `treebench.api`; `treebench.api_entry`, what every command passes through)
and `treebench.errors`, each inside the command that calls it, so that `--help` answers at
once. Exit codes: 0 all cells ok, 2 usage or config error, 3 some cells failed
(error/crashed/oom), 4 some cells timed out (with ``--fail-on timeout``), 5 an expectation of
the config failed (`verify`, `run --verify`), 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM; handled like Ctrl-C).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

app = typer.Typer(
    name="treebench",
    help="Run decision-tree learning experiments (Top-k, DPDT, GOSDT-guesses, NGI, greedy and "
    "optimal baselines) from YAML configs, and report the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _group(name: str, help: str, **kw: Any) -> typer.Typer:
    """A command group of the app (``treebench NAME ...``), with the app's settings."""
    group = typer.Typer(help=help, add_completion=False, pretty_exceptions_enable=False,
                        rich_markup_mode=None, **kw)
    app.add_typer(group, name=name)
    return group


datasets_app = _group("datasets", "List, inspect and fetch datasets of the catalog; inspect local data files.",
                      invoke_without_command=True)
results_app = _group("results", "Check and repair a results directory (cell files, tables, manifest).",
                     no_args_is_help=True)

_STATE = {"debug": False}


@contextlib.contextmanager
def _user_errors():
    """Turn bad input into one sentence on stderr and exit code 2 (traceback with --debug)."""
    from treebench.errors import UserError

    try:
        yield
    except UserError as exc:
        if _STATE["debug"]:
            raise
        typer.echo(f"treebench: error: {exc}", err=True)
        raise typer.Exit(2) from None
    except FileNotFoundError as exc:
        if _STATE["debug"]:
            raise
        typer.echo(f"treebench: error: {exc.filename or exc}: no such file or directory.", err=True)
        raise typer.Exit(2) from None


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks for errors.")] = False,
) -> None:
    _STATE["debug"] = debug
    with _user_errors():  # numba and OpenMP read theirs when imported, treebench's when used
        from treebench import api_entry

        api_entry.check_environment()


@contextlib.contextmanager
def _one_line_warnings():
    """Show the grid-size warning (`treebench.config.grid.GridSizeWarning`) as one line on stderr."""
    import warnings

    from treebench.errors import GridSizeWarning

    shown = warnings.showwarning

    def show(message, category, *args, **kwargs):
        if issubclass(category, GridSizeWarning):
            typer.echo(f"treebench: warning: {message}", err=True)
        else:
            shown(message, category, *args, **kwargs)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


# ----------------------------------------------------------------------------- run / sweep
# a string, not a Path: typer turns an empty --out into ".", the current folder, silently
RunOut = Annotated[str | None, typer.Option("--out", "-o", help="Results directory (default: results/<experiment name>).")]
NJobs = Annotated[int | None, typer.Option("--n-jobs", "-j", help="Parallel workers (-1: all cores). Overrides the config.")]
Backend = Annotated[str | None, typer.Option("--backend", help="Execution backend: fork (default: workers forked from the warm driver), loky, threading, sequential (dask or ray when installed), slurm (job arrays; execution.slurm in the config).")]
Detach = Annotated[bool, typer.Option("--detach", help="With --backend slurm: submit the job arrays and return; `treebench status DIR` follows them, the same command again collects them.")]
Address = Annotated[str | None, typer.Option("--address", help="An existing cluster for --backend dask (tcp://host:8786; default DASK_SCHEDULER_ADDRESS) or ray (auto, ray://host:10001); without it a local cluster.")]
TimeLimit = Annotated[float | None, typer.Option("--time-limit", help="Wall-clock seconds per cell (overrides limits.time).")]
MemLimit = Annotated[float | None, typer.Option("--memory-limit", help="Megabytes per cell on top of the shared worker (overrides limits.memory).")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the cells and how many are done / to run / skipped; run nothing.")]
Force = Annotated[bool, typer.Option("--force", help="Rerun every cell, even those already finished (with finished cells present, needs --overwrite).")]
Overwrite = Annotated[bool, typer.Option("--overwrite", help="Allow a command to replace finished results (e.g. --force on a directory with finished cells).")]
Retry = Annotated[str, typer.Option("--retry", help="Rerun finished cells with these statuses, comma-separated: error,crashed,timeout,oom.")]
FailOn = Annotated[str, typer.Option("--fail-on", help="Exit non-zero on: error (error/crashed/oom, exit 3), timeout (also timeouts, exit 4), never.")]
Seed = Annotated[int | None, typer.Option("--seed", help="Experiment seed (overrides the config's seed).")]
DataDir = Annotated[list[str] | None, typer.Option("--data-dir", help="Directory with dataset files (repeatable; searched before TREEBENCH_DATA_DIR).")]
Offline = Annotated[bool, typer.Option("--offline", help="Never touch the network (same as TREEBENCH_OFFLINE=1).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
NoReport = Annotated[bool, typer.Option("--no-report", help="Do not write the report after the run.")]
Profile = Annotated[str | None, typer.Option("--profile", help="Apply a named profile of the config (e.g. ci: fewer seeds, datasets, depths) with its own expectations.")]
Verify = Annotated[bool, typer.Option("--verify", help="Check the config's expectations after the run; exit 5 when one fails.")]
AddExperiment = Annotated[bool, typer.Option("--add-experiment", help="Allow writing into a results directory that holds another experiment's cells (each config's claims are still checked on its own cells).")]
AllCells = Annotated[bool, typer.Option("--all-cells", help="Check the claims on every cell of the folder (sweeps and other experiments pooled) instead of exactly the cells the config defines.")]
MaxCells = Annotated[int | None, typer.Option("--max-cells", min=1, help="Refuse a grid of more cells than this (default 1,000,000; sets execution.max_cells).")]


def _run(
    config: Path,
    *,
    out, n_jobs, backend, time_limit, memory_limit, dry_run, force, retry, fail_on, seed,
    data_dir, offline, quiet, no_report, sweep: dict[str, list[Any]] | None = None,
    overrides: dict[str, Any] | None = None, overwrite: bool = False, profile: str | None = None,
    verify: bool = False, address: str | None = None, add_experiment: bool = False,
    max_cells: int | None = None, detach: bool = False,
) -> None:
    if max_cells is not None:
        overrides = {**(overrides or {}), "execution.max_cells": max_cells}
    with _user_errors(), _one_line_warnings():
        from treebench import api_light
        from treebench.errors import UserError

        if out is not None and not out.strip():
            raise UserError("--out is empty; give the results folder (or leave --out out for "
                            "results/<experiment name>).")
        out = None if out is None else Path(out)
        retry_t = tuple(s.strip() for s in retry.split(",") if s.strip())
        options = api_light.RunOptions(
            out=out, n_jobs=n_jobs, backend=backend, time_limit=time_limit,
            memory_limit=memory_limit, force=force, overwrite=overwrite, retry=retry_t,
            fail_on=fail_on, seed=seed, sweep=sweep, overrides=overrides, data_dirs=data_dir,
            offline=True if offline else None, progress=not quiet, report=not no_report,
            profile=profile, address=address, add_experiment=add_experiment, detach=detach,
        )
        api_light.check_options(options)  # before anything reads the config or the folder
        # a rerun with nothing to do answers here, before the config schema or a learner loads
        fast = None if dry_run or verify else api_light.answer(config, options)[1]
        if fast is not None:
            _print_summary(fast)
            raise typer.Exit(fast.exit_code)
        from treebench import api

        if offline:
            from treebench import api_entry

            api_entry.go_offline()
        if dry_run:
            # loads the data (from the cache) and fits each binarization once: label, column
            # and binarizer errors show now, exit 2, without fitting any learner
            dry = api.dry_run(config, options)
            _print_plan(dry)
            for line in dry.cost_lines():
                typer.echo(line)
            for note in dry.notes:
                typer.echo(f"warning: {note}")
            raise typer.Exit(0)
        summary = api.run_experiment(config, options)
    _print_summary(summary)
    code = summary.exit_code
    if verify and not summary.interrupted:
        with _user_errors():
            found = api_light.verify_dir(summary.out)
        for v in found:
            _print_verification(v)
        code = api_light.verify_exit_code(found) or code
    raise typer.Exit(code)


def _console():
    """A rich console on stdout; full width when stdout is not a terminal (a piped table is
    never cut at 80 columns)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=10_000, soft_wrap=True)


def _print_plan(dry) -> None:
    """The cells of a dry run (`treebench.api.DryRun`) and what a run would do with them."""
    from rich.table import Table

    from treebench.api_light import describe_applied

    exp, pl = dry.experiment, dry.plan
    con = _console()
    t = Table(title=escape(f"{exp.name}: {len(pl.cells)} cells"), show_lines=False)
    for col in ("cell", "dataset", "fold", "seed", "binarizer", "algorithm", "params", "state"):
        t.add_column(col)
    state = {c.id: "done" for c in pl.done} | {c.id: "skip" for c in pl.skipped} | {c.id: "run" for c in pl.to_run}
    for c in pl.cells[:200]:
        t.add_row(*(escape(text) for text in (  # names and labels as written, never markup
            c.id, c.dataset, str(c.fold), str(c.seed),
            c.binarizer + (f" {c.binarizer_params}" if c.binarizer_params else ""),
            c.algorithm_label, ", ".join(f"{k}={v}" for k, v in sorted(c.algorithm_params.items())),
            state[c.id],
        )))
    con.print(t)
    if len(pl.cells) > 200:
        con.print(f"... and {len(pl.cells) - 200} more cells")
    for line in describe_applied(dry.applied):
        con.print(f"sweep: {line}", markup=False)
    for sk in pl.pairs_skipped:
        con.print(f"not paired: {sk.algorithm} with binarization `{sk.binarizer}` on "
                  f"{sk.dataset}: {sk.reason}", markup=False)
    con.print(
        f"already done: {len(pl.done)}  to run: {len(pl.to_run)}  skipped: {len(pl.skipped)}"
        f"  (results in {dry.out})", markup=False,
    )
    if dry.n_checked:
        con.print(f"data checked: {dry.n_checked} dataset/binarization combination(s) load and "
                  f"binarize (no learner was fitted)", markup=False)


def _print_summary(s) -> None:
    from treebench.api_light import describe_applied

    for line in describe_applied(s.sweep_applied):
        typer.echo(f"sweep: {line}")
    for sk in s.pairs_skipped:
        typer.echo(f"not paired: {sk.algorithm} with binarization `{sk.binarizer}` on "
                   f"{sk.dataset}: {sk.reason}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(s.counts.items())) or "no cells"
    on = s.cluster.describe() if getattr(s, "cluster", None) is not None else f"{s.n_jobs} worker(s)"
    typer.echo(f"{s.experiment}: {s.n_cells} cells ({counts}); ran {s.n_ran} "
               f"now on {on}.")
    for name, how in getattr(s, "splits", {}).items():
        typer.echo(f"split:   {name}: {how}")
    for note in getattr(s, "data_warnings", []):
        typer.echo(f"warning: {note}")
    for label, text, n in getattr(s, "fit_warnings", [])[:8]:
        typer.echo(f"warning: {n} cell(s) of `{label}`: {text}")
    if len(getattr(s, "fit_warnings", [])) > 8:
        typer.echo(f"... and {len(s.fit_warnings) - 8} other warning(s): the results table's "
                   f"`fit_warnings` column lists each cell's.")
    for note in getattr(s, "notes", []):
        typer.echo(f"note:    {note}")
    for status, message, n in getattr(s, "failures", [])[:8]:
        typer.echo(f"{status}: {n} cell(s): {message or '(no message)'}", err=True)
    if len(getattr(s, "failures", [])) > 8:
        rest = list(dict.fromkeys(status for status, _, _ in s.failures[8:]))
        flags = " ".join(f"--status {status}" for status in rest)
        typer.echo(f"... and {len(s.failures) - 8} other kind(s) of failure; `treebench cells "
                   f"{s.out} {flags}` lists the cells.", err=True)
    if s.tables:
        typer.echo(f"results: {s.tables[0]} and {s.tables[1].name}")
    if s.report_dir:
        typer.echo(f"report:  {s.report_dir / 'index.html'}")
    if s.interrupted:
        how = "terminated (SIGTERM)" if s.exit_code == 143 else "interrupted"  # 130: Ctrl-C
        typer.echo(f"{how}: finished cells are saved; run the same command again to resume.", err=True)


def _run_options(
    out: RunOut = None, n_jobs: NJobs = None, backend: Backend = None, address: Address = None,
    time_limit: TimeLimit = None, memory_limit: MemLimit = None, dry_run: DryRun = False,
    force: Force = False, retry: Retry = "", fail_on: FailOn = "error", seed: Seed = None,
    data_dir: DataDir = None, offline: Offline = False, quiet: Quiet = False, no_report: NoReport = False,
    overwrite: Overwrite = False, profile: Profile = None, verify: Verify = False,
    add_experiment: AddExperiment = False,
    max_cells: MaxCells = None, detach: Detach = False,
) -> dict[str, Any]:
    """The options `run` and `sweep` share, as the keyword arguments of `_run` (typer reads the
    options from this signature through `_with_run_options`)."""
    return dict(locals())


def _with_run_options(command):
    """``command`` with the options of `_run_options` after its own parameters; it receives
    them as one dict, ``options``."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values()
           if p.name != "options"]
    shared = list(inspect.signature(_run_options, eval_str=True).parameters.values())

    @functools.wraps(command)
    def with_options(**kw: Any) -> None:
        options = _run_options(**{p.name: kw.pop(p.name) for p in shared})
        command(options=options, **kw)

    with_options.__signature__ = inspect.Signature(own + shared)  # what typer reads
    return with_options


@app.command()
@_with_run_options
def run(
    config: Annotated[Path, typer.Argument(help="Experiment config (YAML).")],
    *,
    options: dict[str, Any],
) -> None:
    """Run every cell of an experiment config in parallel; resume where a previous run stopped."""
    _run(config, **options)


@app.command()
def status(
    results_dir: Annotated[Path, typer.Argument(help="Results directory of a --backend slurm run.")],
) -> None:
    """Show the cells of a SLURM run by state: queued, running, done, failed, not run (from the
    results folder and the scheduler)."""
    with _user_errors():
        from treebench import api_light

        found = api_light.slurm_status(results_dir)
    for line in found.lines(results_dir):
        typer.echo(line)


@app.command()
@_with_run_options
def sweep(
    config: Annotated[Path, typer.Argument(help="Experiment config (YAML) whose sweep axes to override.")],
    k: Annotated[str | None, typer.Option("--k", help="Values of k, e.g. 1,2,4,8,all.")] = None,
    depth: Annotated[str | None, typer.Option("--depth", help="Values of max_depth, e.g. 2..6 or 2,3,5.")] = None,
    lambda_: Annotated[str | None, typer.Option("--lambda", help="Regularisation values, e.g. 0.001,0.01: sets each algorithm's first parameter among regularization, lambda_, lam, ccp_alpha (printed per algorithm).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="Any algorithm parameter: NAME=VALUES (repeatable).")] = None,
    *,
    options: dict[str, Any],
) -> None:
    """Override sweep axes of a config from the command line (explicit flags beat the config), then
    run. The sweep's cells are added to the experiment's results directory (finished cells are
    kept and merged into its tables; a rerun resumes); each alias flag prints the parameter it
    set for each algorithm."""
    with _user_errors():
        from treebench import api_light

        axes = api_light.sweep_axes(k, depth, lambda_, param)
    _run(config, sweep=axes, **options)


# ----------------------------------------------------------------------------- verify
def _print_verification(v) -> None:
    from rich.console import Console
    from rich.table import Table

    from treebench import api_light

    con = Console(width=max(Console().width, 140))
    if not v.verdicts:
        con.print(escape(v.headline()))
        return
    for note in filter(None, v.note.split("; ")):
        con.print(escape(f"note: {note}"))
    header, rows = api_light.verdict_table(v)
    t = Table(title=escape(v.headline()), show_lines=False)
    for col in header:
        t.add_column(col, overflow="fold", justify="right" if col in ("measured", "difference") else "left")
    for verdict, row in zip(v.verdicts, rows, strict=True):
        style = None if verdict.passed else "bold red"
        t.add_row(*(escape(c) for c in row), style=style)
    con.print(t)


@app.command()
def verify(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `treebench run`, or a folder of them (each verified on its own).")],
    config: Annotated[Path | None, typer.Option("--config", "-c", help="Take the expectations (and the cells they are checked on) from this config instead of the run's manifest.json.")] = None,
    profile: Profile = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the verdicts as JSON to this file (one experiment) or folder (several).")] = None,
    all_cells: AllCells = False,
) -> None:
    """Check the expectations of a config (`expect:`) against its results: measured, expected,
    difference, pass/fail, on exactly the cells the config defines. Exit 5 when one fails."""
    with _user_errors():
        from treebench import api_light

        found = []
        for d in api_light.experiments_to_verify(results_dir):  # one experiment at a time
            for note in api_light.refresh_results(d):
                typer.echo(f"note: {d}: {note}")
            for v in api_light.verify_dir(d, config=config, profile=profile, all_cells=all_cells):
                _print_verification(v)
                found.append((d, v))
        if json_out is not None:
            api_light.write_verdicts(found, json_out)
    failed = sum(not v.passed for _, v in found)
    if len(found) > 1:
        typer.echo(f"{len(found) - failed} of {len(found)} experiment(s) verified"
                   + (f"; {failed} failed" if failed else ""))
    raise typer.Exit(api_light.verify_exit_code([v for _, v in found]))


def _exit_code(call) -> int:
    """The exit code ``call()`` ends with (a command body that raises `typer.Exit`)."""
    try:
        call()
    except (typer.Exit, SystemExit) as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 1))
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


#: exit codes that stop `reproduce` at once: Ctrl-C and SIGTERM during a run
_STOPS = (130, 143)


@app.command()
def reproduce(
    configs: Annotated[list[Path], typer.Argument(help="The configs to reproduce, e.g. the paper configs of configs/.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder of the runs: each config's results go into OUT/<config file name without .yaml>.")] = Path("results/reproduce"),
    profile: Profile = None,
) -> None:
    """Run each config (with --profile, its named reduction) into OUT/<config name>, one after
    the other in this process, then verify every experiment in OUT (the verdicts also as JSON
    in OUT/verify). Failed cells are recorded and verified against the claims they touch; a
    config that cannot run is named and the others still run. Exit 5 when an expectation
    fails, 2 when a config could not run."""
    with _user_errors():
        from treebench.errors import UserError

        stems = [c.stem for c in configs]
        twice = sorted({s for s in stems if stems.count(s) > 1})
        if twice:
            raise UserError(f"two configs would run into one folder ({', '.join(twice)}, under "
                            f"{out}); give configs whose file names differ.")
    failed = []
    for config in configs:
        typer.echo(f"== {config}" + (f" (profile {profile})" if profile else ""))
        options = {**_run_options(), "out": str(out / config.stem), "profile": profile,
                   "quiet": True, "fail_on": "never"}
        code = _exit_code(lambda: _run(config, **options))
        if code in _STOPS:
            raise typer.Exit(code)
        if code:
            failed.append(config.stem)
    status = 0
    if out.is_dir():
        status = _exit_code(lambda: verify(out, config=None, profile=None,
                                           json_out=out / "verify", all_cells=False))
    if failed:
        typer.echo(f"reproduce: {len(failed)} of {len(configs)} configs could not run (data or "
                   f"config): {' '.join(failed)}; nothing of theirs was verified", err=True)
        status = status or 2
    raise typer.Exit(status)


# ----------------------------------------------------------------------------- report / show
@app.command()
def report(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `treebench run`, or a folder of them (e.g. results/).")],
    out_text: Annotated[str | None, typer.Option("--out", "-o", help="Report directory (default: RESULTS_DIR/report).")] = None,
    format: Annotated[str, typer.Option("--format", help="Comma-separated formats: html, md, csv, latex; add svg for SVG figures beside the PNGs.")] = "html,md,csv,latex",
    figures: Annotated[bool, typer.Option("--figures/--no-figures", help="Draw the figures (most of a report's time); --no-figures writes the tables and pages alone and leaves the figures/ folder of an earlier report as it was.")] = True,
    reference_solver: Annotated[str | None, typer.Option("--reference-solver", help="The solvers section's reference: an algorithm entry's label (overrides the config's report.reference_solver for this report).")] = None,
    rivals: Annotated[str | None, typer.Option("--rivals", help="Comma-separated entry labels the fastest-rival table measures against (overrides report.rivals).")] = None,
    min_reference_seconds: Annotated[float | None, typer.Option("--min-reference-seconds", help="Ratios whose reference fit took less than this many seconds stay out of the means (overrides report.min_reference_seconds).")] = None,
    clock: Annotated[str | None, typer.Option("--clock", help="The fit times the solvers section compares: wall (fit_seconds) or cpu (fit_cpu_seconds) (overrides report.clock).")] = None,
) -> None:
    """Write tables (CSV, Markdown, LaTeX), figures and a self-contained index.html.

    Given a folder of experiments (``results/`` with ``results/<experiment>/``), write each
    experiment's report, a top-level index.html and, when datasets repeat across experiments,
    a cross-experiment summary table. The solvers section's options (reference solver,
    rivals, floor, clock) are the config's as its run recorded them unless given here."""
    with _user_errors():
        from treebench import api_light

        from treebench.errors import UserError

        if out_text is not None and not out_text.strip():
            # a string, not a Path: typer turns an empty --out into ".", the current folder
            raise UserError("--out is empty; give the report folder (or leave --out out for "
                            "RESULTS_DIR/report).")
        out = Path(out_text) if out_text is not None else None
        fmts = api_light.report_formats(format)  # `HTML`, `tex`: the names the stamp uses
        options = {"reference_solver": reference_solver, "rivals": _label_list(rivals),
                   "min_reference_seconds": min_reference_seconds, "clock": clock}
        if out is None and api_light.report_unchanged(
                results_dir, api_light.stamp_formats(fmts, figures), options):
            typer.echo(f"report: {api_light.report_page(results_dir / 'report', fmts, False)} "
                       f"(unchanged: written from these cells, in these formats, by this version)")
            return
        for note in api_light.refresh_results(results_dir):
            typer.echo(f"note: {note}")
        # the current report was looked for above: its own check would read the folder again
        target = api_light.report_results(results_dir, out, fmts, keep_current=False,
                                          figures=figures, options=options)
    typer.echo(f"report: {target}")


def _label_list(text: str | None) -> list[str] | None:
    """``--rivals a,b`` as a list of labels (None when not given; the report checks them)."""
    return None if text is None else [part.strip() for part in text.split(",")]


Where = Annotated[list[str] | None, typer.Option("--where", "-w", help="Conditions KEY=VALUE (repeatable, or space-separated in one quoted value): a results column or a parameter by its name, e.g. dataset=topk/car k=all fold=0; KEY=a,b (or KEY=a KEY=b) for either of several values; quotes keep spaces and commas in a value: \"label='CART, deep'\".")]


def _notes(notes: list[str]) -> None:
    """Notes on unusable cell files, on stderr (their cells are not listed)."""
    for note in notes:
        typer.echo(f"note: {note}", err=True)


@app.command()
def cells(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `treebench run`.")],
    where: Where = None,
    status: Annotated[list[str] | None, typer.Option("--status", help="Only cells with this status (repeatable): ok, timeout, oom, error, crashed.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="Show at most this many rows (0: all).")] = 50,
    ids: Annotated[bool, typer.Option("--ids", help="Print only the matching cell ids, one a line.")] = False,
    all_cells: Annotated[bool, typer.Option("--all-cells", help="Also list the cells of earlier definitions (a config since edited, data since changed), which the results tables leave out.")] = False,
) -> None:
    """List the cells of a results directory that match --where / --status, with their ids and
    key metrics (then `treebench show DIR ID` prints one's tree)."""
    with _user_errors():
        from rich.console import Console
        from rich.table import Table

        from treebench import api_light

        rows, notes = api_light.matching_cells(results_dir, where, status, all_cells=all_cells)
    _notes(notes)
    if ids:
        for cid in rows["cell_id"]:
            typer.echo(cid)
        return
    cols, varying = api_light.cell_columns(rows)  # with the parameters that differ
    t = Table(title=f"{len(rows)} cell(s)" + (f", first {limit} shown" if limit and len(rows) > limit else ""))
    for c in cols:
        # the column names of the docs: `algorithm` for the entry's label
        name = "algorithm" if c == "algorithm_label" else c
        t.add_column(escape(c.split("_", 1)[1] if c in varying else name), no_wrap=c == "cell_id",
                     overflow="fold", justify="right" if c.endswith(("accuracy", "seconds", "leaves", "depth")) else "left")
    view = rows.head(limit) if limit else rows
    for i in range(len(view)):
        t.add_row(*(escape(api_light.cell_text(view[c].iloc[i])) for c in cols))
    Console(width=max(Console().width, 160)).print(t)


@app.command()
def show(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `treebench run`.")],
    cell_id: Annotated[str | None, typer.Argument(help="Cell id (a unique prefix is enough); or use --where.")] = None,
    format: Annotated[str, typer.Option("--format", help="text, json or dot.")] = "text",
    where: Where = None,
) -> None:
    """Print the fitted tree of one cell as readable rules (or JSON / Graphviz dot). Name the
    cell by its id, or by what it is with --where (refused, with the list, when several match)."""
    with _user_errors():
        from treebench import api_light

        api_light.check_show_request(cell_id, where, format)
        if where:
            rows, notes = api_light.matching_cells(results_dir, where)
            _notes(notes)
            cell_id = api_light.one_cell_id(rows, results_dir, where)
        text = api_light.cell_tree_text(results_dir, cell_id, format)
    typer.echo(text)


# ----------------------------------------------------------------------------- results
def _print_check(c, repair: bool) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items())) or "none"
    typer.echo(f"{c.directory}: {sum(c.counts.values())} usable cell file(s) ({counts})")
    for name, why in sorted(c.problems.items()):
        typer.echo(f"unusable: cells/{name}: {why}")
    for line in c.pruned:
        typer.echo(f"pruned:   {line}")
    for line in c.repaired:
        typer.echo(f"repaired: {line}")
    for name, why in sorted(c.foreign.items()):
        typer.echo(f"foreign:  {name} is not a results table treebench wrote ({why}): move it "
                   f"away; treebench would replace it")
    typer.echo("tables:   " + ("current (built from exactly these cells)" if c.tables is None
                              else f"stale: {c.tables}"))
    hint = {"ok": "ok", "missing": "missing: run the experiment's config again into this folder "
            "to record it", "damaged": "damaged: run the experiment's config again into this "
            "folder to rewrite it"}
    typer.echo(f"manifest: {hint[c.manifest]}")
    for key, n, missing in c.experiments:
        typer.echo(f"experiment {key}: {n} cell(s) defined, "
                   + (f"{missing} without a usable result" if missing else "all present"))
    if c.n_unclaimed:
        typer.echo(f"{c.n_unclaimed} cell(s) belong to no recorded experiment (left over from a "
                   f"config since edited or data since changed; no run counts them, "
                   f"results-earlier.csv lists them): --prune-stale moves them to quarantine/")
    if c.repairable and not repair:
        typer.echo("run again with --repair to set unusable files aside and rewrite the tables")


@results_app.command("check")
def results_check(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `treebench run`.")],
    repair: Annotated[bool, typer.Option("--repair", help="Move unusable cell files to quarantine/ and rewrite stale or damaged tables.")] = False,
    prune_stale: Annotated[bool, typer.Option("--prune-stale", help="Also move the cells that no experiment recorded in manifest.json defines (left over from an edited config) to quarantine/ (implies --repair).")] = False,
) -> None:
    """Check every cell file (content hash, name, schema), the tables against the cells, and
    the manifest's experiments. Exit 0 when all is consistent (after --repair), 1 when not."""
    with _user_errors():
        from treebench import api_light

        c = api_light.check_results(results_dir, repair=repair, prune_stale=prune_stale)
    _print_check(c, repair or prune_stale)
    raise typer.Exit(0 if c.healthy else 1)


@results_app.command("rebuild")
def results_rebuild(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `treebench run`.")],
) -> None:
    """Set unusable cell files aside and rewrite results.parquet and results.csv from the cell
    files (the same as `results check --repair`)."""
    results_check(results_dir, repair=True)


# ----------------------------------------------------------------------------- listings
@app.command()
def algorithms(
    all_: Annotated[bool, typer.Option("--all", help="Also list test-only algorithms.")] = False,
) -> None:
    """List registered algorithms with their parameters and availability."""
    with _user_errors():
        from rich.console import Console
        from rich.table import Table

        from treebench import api_light

        t = Table(title="algorithms")
        for col in ("name", "available", "takes", "solves (objective: may ask)",
                    "parameters (defaults)", "description"):
            # a problem name is never cut in two
            t.add_column(col, overflow="fold", min_width=24 if col.startswith("solves") else None)
        for row in api_light.algorithm_rows(all_):
            t.add_row(*(escape(str(x)) for x in row))
        Console(width=200).print(t)
    typer.echo("takes: 0/1 = binary features only (give a binarization such as quantile); raw = "
               "numeric features as they are; categorical = text categories; missing = NaN "
               "routed by the learner; weights = sample weights; multiclass; regression.")
    typer.echo("solves: the problem the defaults solve; in brackets the problems an entry may ask "
               "for with `objective:` (docs/objectives.md).")


@app.command()
def binarizers() -> None:
    """List registered binarizers with their parameters (`binarization:` in a config)."""
    with _user_errors():
        from rich.console import Console
        from rich.table import Table

        from treebench import api_light

        t = Table(title="binarizers")
        for col in ("name", "for", "parameters (defaults)", "description"):
            t.add_column(col, overflow="fold")
        for row in api_light.binarizer_rows():
            t.add_row(*(escape(str(x)) for x in row))
        con = Console(width=160)
        con.print(t)
        con.print(
            "Every method also takes `categorical` (the method for categorical columns, default onehot), "
            "`categorical_params` and `fit_on` (train, the default, or all). Example: "
            "binarization: {method: quantile, params: {max_splits: 8}}"
        )


@app.command()
def metrics() -> None:
    """List the metrics of the metric registry: their names (as used in a config's `metrics:`,
    the report and `expect:`), results columns, task and meaning."""
    with _user_errors():
        from rich.console import Console
        from rich.table import Table

        from treebench import api_light

        t = Table(title="metrics")
        for col in ("name", "columns", "task", "better", "description"):
            t.add_column(col, overflow="fold")
        for row in api_light.metric_rows():
            t.add_row(*(escape(str(x)) for x in row))
        Console(width=160).print(t)
        for name, why in api_light.metric_import_errors().items():  # a broken plug-in is shown
            typer.echo(f"plug-in metric `{name}` could not be imported: {why}")


@datasets_app.callback()
def _datasets(ctx: typer.Context) -> None:
    """List, inspect and fetch datasets (without a subcommand: list them)."""
    if ctx.invoked_subcommand is None:
        datasets_list(data_dir=None, tag=None)


@datasets_app.command("list")
def datasets_list(
    data_dir: DataDir = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only datasets with this tag (repeatable), e.g. dl85, topk, generator.")] = None,
) -> None:
    """List datasets with their availability (embedded, local, downloadable, missing) and size."""
    with _user_errors():
        from rich.console import Console
        from rich.table import Table

        from treebench import api_light

        rows = api_light.dataset_rows(data_dir, tag or ())
        t = Table(title=f"datasets ({len(rows)})")
        for col in ("name", "availability", "where (found, or where to get it)", "shape", "size",
                    "parameters (defaults)", "description"):
            t.add_column(col, overflow="fold")
        for row in rows:
            t.add_row(*(escape(str(x)) for x in row))
        Console(width=200).print(t)


@datasets_app.command("info")
def datasets_info(
    name: Annotated[str, typer.Argument(help="Dataset name (see `treebench datasets list`) or the path of a local data file.")],
    label: Annotated[str | None, typer.Option("--label", help="Local file: the label column (name or position; default: the last).")] = None,
    header: Annotated[str | None, typer.Option("--header", help="Local file: none, auto (default) or first-row.")] = None,
    delimiter: Annotated[str | None, typer.Option("--delimiter", help="Local file: the field delimiter (default: comma; tab, space).")] = None,
    categorical: Annotated[str | None, typer.Option("--categorical", help="Local file: categorical columns, comma-separated names or positions (or auto, all, none).")] = None,
    test_path: Annotated[str | None, typer.Option("--test-path", help="Local file: a second file holding the test rows.")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", help="Local file: any other option as KEY=VALUE, e.g. missing=NA or bad_values=missing (repeatable).")] = None,
    binarization: Annotated[str | None, typer.Option("--binarization", help="Also show what this binarizer makes of the data (see `treebench binarizers`).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="A parameter of --binarization as KEY=VALUE, e.g. max_splits=8 (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    data_dir: DataDir = None,
    offline: Offline = False,
) -> None:
    """Show rows, features and their kinds, missing values, the label distribution and provenance
    of a dataset or local file (loads it); with --binarization, its binary columns per feature."""
    with _user_errors():
        import json

        from treebench import api_light

        opts = api_light.file_options(option, label=label, header=header, delimiter=delimiter,
                                      categorical=categorical, test_path=test_path)
        info = api_light.describe_dataset(name, opts, binarization, param, data_dir,
                                          True if offline else None)
    if as_json:
        typer.echo(json.dumps(info, indent=2, default=str))
    else:
        typer.echo(api_light.format_dataset_info(info))


@datasets_app.command("fetch")
def datasets_fetch(
    names: Annotated[list[str] | None, typer.Argument(help="Dataset names to download into the cache and parse.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every catalog dataset that is downloadable and not yet here.")] = False,
    data_dir: DataDir = None,
    offline: Offline = False,
) -> None:
    """Download datasets into the user cache and parse them, checking each file's sha256
    (files already present are only verified)."""
    with _user_errors():
        from treebench import api_light
        from treebench.errors import UserError

        if all_:
            names = api_light.downloadable_datasets(data_dir)
            if not names:
                typer.echo("every downloadable dataset is already here.")
                return
        if not names:
            raise UserError("name the datasets to fetch (see `treebench datasets list`), or give --all.")

        rows = api_light.fetch_datasets(names, data_dir, True if offline else None)
    for r in rows:
        typer.echo(f"{r['name']}: {r['status']}: {r.get('message') or ''}".rstrip(": "))


_PYTHON_SHOWWARNING: Any = None


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """treebench's own warnings (data caveats, damaged cache files) as one line for people;
    other libraries' warnings as Python prints them."""
    import warnings

    if category.__module__.startswith("treebench"):
        print(f"warning: {message}", file=file or sys.stderr)
        return
    _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)


def main() -> None:
    """Console-script entry point. SIGTERM (a batch scheduler's stop) is handled like Ctrl-C:
    finished cells are kept, workers stopped; the exit code is 143 (Ctrl-C: 130)."""
    import warnings

    from treebench.api_entry import TERMINATED, exit_code_of, sigterm_as_interrupt, terminated

    global _PYTHON_SHOWWARNING
    if warnings.showwarning is not _show_warning:
        _PYTHON_SHOWWARNING = warnings.showwarning
        warnings.showwarning = _show_warning
    try:
        with sigterm_as_interrupt():
            app()
    except KeyboardInterrupt as exc:
        code = exit_code_of(exc)
        typer.echo("treebench: " + ("terminated" if code == TERMINATED else "interrupted"), err=True)
        sys.exit(code)
    except SystemExit as exc:
        # typer exits 130 for any KeyboardInterrupt; and a SIGTERM whose `Terminated` was
        # swallowed where Python ignores exceptions (a finalizer, logging's lock release) lets
        # the command finish: it still exits 143, as the scheduler that sent it expects
        if terminated() and exc.code != TERMINATED:
            typer.echo("treebench: terminated", err=True)
            sys.exit(TERMINATED)
        raise
    if terminated():  # a command that returned without exiting
        typer.echo("treebench: terminated", err=True)
        sys.exit(TERMINATED)


def entry() -> None:
    """The ``treebench`` command (console script and ``python -m treebench.cli``): `main`,
    then an exit without the interpreter's teardown.

    Tearing down an interpreter that has loaded scikit-learn, SciPy, pandas and pyarrow frees
    every module and object one by one: 0.3-0.6 s on a 2-core machine, longer than a whole
    rerun with nothing to do, for memory the operating system takes back anyway. Every result
    has been handed to the operating system when `main` returns (cell files, tables and
    reports are written whole to temporary files, closed and renamed into place), so, once
    the ``atexit`` functions have run (logging's flush, multiprocessing's joining of its
    children, ``weakref.finalize`` callbacks, coverage's data) and stdout and stderr are
    flushed, the process ends with ``os._exit``. A non-daemon thread still running, or an exit
    with a message instead of a code, takes the ordinary way out, which waits for the thread
    or prints the message. `main` itself exits normally, for callers in the same process."""
    import atexit
    import os
    import threading

    try:
        main()
        code: Any = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
    others = [t for t in threading.enumerate()
              if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if others or not isinstance(code, int):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
