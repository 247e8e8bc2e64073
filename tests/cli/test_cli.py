"""The command line through typer's runner: every command, help texts, exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.store import read_table

from runs import tiny_config

runner = CliRunner()


def _commands():
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path):
        out.append((path, cmd))
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])

    walk(root, [])
    return out


def test_every_command_and_option_has_help():
    for path, cmd in _commands():
        assert (cmd.help or "").strip(), f"command {' '.join(path)} lacks help"
        for p in cmd.params:
            kind = type(p).__name__
            if kind.endswith("Option") and p.name != "help":
                assert (p.help or "").strip(), f"option {p.opts} of {' '.join(path)} lacks help"
            if kind.endswith("Argument"):
                assert getattr(p, "help", None), f"argument {p.name} of {' '.join(path)} lacks help"
        r = runner.invoke(app, [*path, "--help"])
        assert r.exit_code == 0 and "Usage" in r.output


def test_run_and_sweep_share_their_run_options():
    """`sweep` takes every option of `run` (same flags, defaults and help), after its own axes."""
    cmds = {tuple(path): cmd for path, cmd in _commands()}

    def options(cmd):
        return [(p.name, tuple(p.opts), p.default, p.help) for p in cmd.params
                if type(p).__name__.endswith("Option")]

    run, sweep = options(cmds[("run",)]), options(cmds[("sweep",)])
    assert [o[0] for o in sweep[:4]] == ["k", "depth", "lambda_", "param"]
    assert sweep[4:] == run and len(run) == 21


def test_the_cli_contract_forbids_every_module_but_the_api_and_the_errors():
    """The import contract `cli` (pyproject.toml) lists every other top-level module of
    treebench, so a module added later cannot be imported by the command line unnoticed."""
    import pathlib
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in contracts["tool"]["importlinter"]["contracts"] if c["id"] == "cli")
    package = root / "treebench"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    allowed = {"cli", "api", "api_light", "api_entry", "errors"}
    assert contract["source_modules"] == ["treebench.cli"]
    assert {m.removeprefix("treebench.") for m in contract["forbidden_modules"]} == modules - allowed


def test_help_imports_no_heavy_module():
    code = (
        "import sys; from treebench.cli import app; from typer.testing import CliRunner;"
        "CliRunner().invoke(app, ['run', '--help']);"
        "heavy = [m for m in ('numpy', 'pandas', 'sklearn', 'numba', 'matplotlib') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_algorithms_lists_registry():
    r = runner.invoke(app, ["algorithms"])
    assert r.exit_code == 0
    for name in ("cart", "greedy", "gbdt", "random-forest"):
        assert name in r.output
    assert "test-sleep" not in r.output
    assert "test-sleep" in runner.invoke(app, ["algorithms", "--all"]).output


def test_metrics_lists_the_registry():
    from treebench import metrics as registry

    r = runner.invoke(app, ["metrics"])
    assert r.exit_code == 0, r.output
    for name in registry.names():
        assert name in r.output
    assert "expected_cost_test" in r.output and "val_accuracy" in r.output


def test_datasets_list_includes_embedded():
    r = runner.invoke(app, ["datasets", "list"])
    assert r.exit_code == 0, r.output
    assert "breast_cancer" in r.output and "iris" in r.output


def test_run_show_report_roundtrip(write_config, tmp_path):
    cfg = write_config(tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 2}}]))
    out = tmp_path / "o"
    r = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output
    df = read_table(out / "results.parquet")
    cid = df["cell_id"].iloc[0]
    r = runner.invoke(app, ["show", str(out), cid[:8]])
    assert r.exit_code == 0, r.output
    assert "petal" in r.output and "class:" in r.output and "<=" in r.output
    r = runner.invoke(app, ["show", str(out), cid, "--format", "dot"])
    assert r.exit_code == 0 and r.output.startswith("digraph")
    r = runner.invoke(app, ["show", str(out), "ffffffff"])
    assert r.exit_code == 2 and "no cell with id" in r.output
    r = runner.invoke(app, ["report", str(out), "--format", "md,csv"])
    assert r.exit_code == 0, r.output
    assert (out / "report" / "summary.md").is_file()
    r = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "no results.parquet" in r.output


def test_sweep_overrides_axes(write_config, tmp_path):
    cfg = write_config(tiny_config())
    r = runner.invoke(app, ["sweep", str(cfg), "--depth", "1..3", "--out", str(tmp_path / "o"), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "to run: 9" in r.output
    r = runner.invoke(app, ["sweep", str(cfg), "--k", "1,2", "--dry-run"])
    assert r.exit_code == 2 and "--k" in r.output and "none of the config's algorithms" in r.output
    r = runner.invoke(app, ["sweep", str(cfg), "--dry-run"])
    assert r.exit_code == 2 and "at least one axis" in r.output
    r = runner.invoke(app, ["sweep", str(cfg), "--param", "criterion=gini,entropy", "--dry-run",
                            "--out", str(tmp_path / "o")])
    assert r.exit_code == 0 and "to run: 12" in r.output  # 3 folds x 2 depths x 2 criteria


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["run", "/nonexistent/x.yaml"], "no such config file"),
        (["run", "{cfg}", "--fail-on", "sometimes"], "--fail-on"),
        (["run", "{cfg}", "--retry", "ok"], "--retry"),
        (["run", "{cfg}", "--backend", "mpi"], "--backend"),
        (["run", "{cfg}", "--backend", "mpi", "--dry-run"], "--backend must be one of"),
        (["sweep", "{cfg}", "--depth", "1", "--backend", "mpi", "--dry-run"],
         "--backend must be one of"),
        (["run", "{cfg}", "--address", "tcp://h:1", "--dry-run"], "--address is for"),
        (["run", "{cfg}", "--time-limit", "-1"], "--time-limit"),
    ],
)
def test_bad_flags_exit_2_without_traceback(write_config, tmp_path, args, fragment):
    cfg = write_config(tiny_config())
    args = [a.replace("{cfg}", str(cfg)) for a in args] + ["--out", str(tmp_path / "o")]
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert fragment in r.output and "Traceback" not in r.output


def test_a_bad_backend_is_refused_on_a_finished_folder_too(write_config, tmp_path):
    """A rerun with nothing to do is answered from the remembered plan; its options are
    checked all the same (`--backend bogus` exited 0 on a finished folder, 2 on a fresh one)."""
    cfg = write_config(tiny_config())
    out = str(tmp_path / "o")
    assert runner.invoke(app, ["run", str(cfg), "--out", out, "-q", "--no-report"]).exit_code == 0
    r = runner.invoke(app, ["run", str(cfg), "--out", out, "--backend", "bogus", "--no-report"])
    assert r.exit_code == 2 and "--backend must be one of" in r.output, r.output


@pytest.mark.parametrize("command", [["run"], ["sweep", "--depth", "1"]])
@pytest.mark.parametrize("out", ["", "  "])
def test_an_empty_out_is_refused_not_the_current_folder(write_config, tmp_path, monkeypatch,
                                                         command, out):
    """An empty --out (an unset shell variable) would be the current folder, and the results
    files would land among the user's own: refused with one sentence, nothing written."""
    cfg = write_config(tiny_config())
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    r = runner.invoke(app, [command[0], str(cfg), *command[1:], "--out", out])
    assert r.exit_code == 2, r.output
    assert "--out is empty" in r.output and "Traceback" not in r.output
    assert list(here.iterdir()) == []


def test_out_naming_a_file_and_a_folder_as_config_are_said_as_such(write_config, tmp_path):
    cfg = write_config(tiny_config())
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    r = runner.invoke(app, ["run", str(cfg), "--out", str(afile)])
    assert r.exit_code == 2 and "is a file, not a folder" in r.output, r.output
    assert afile.read_text() == "mine\n"
    r = runner.invoke(app, ["run", str(tmp_path), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "a folder, not a config file" in r.output, r.output
