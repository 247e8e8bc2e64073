"""The numbers of an ``expect:`` item are finite: ``.nan``, ``.inf`` and ``1e400`` (read as
infinity) are refused when the config is read, by every command that reads it, with one
sentence naming the key (they used to pass ``--dry-run`` and crash ``verify``, ``run --verify``
and ``report`` with an IndexError)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from treebench.cli import app

runner = CliRunner()

CONFIG = """\
name: claims
datasets: [iris]
split: {kind: holdout}
algorithms: [{name: cart, params: {max_depth: 1}}]
execution: {n_jobs: 1, backend: sequential}
expect:
  - source: a paper's table
    metric: test_accuracy
"""

CHECKS = {
    "value": "value: {x}\n    abs: 0.1",
    "abs": "value: 0.5\n    abs: {x}",
    "rel": "value: 0.5\n    rel: {x}",
    "ge": "ge: {x}",
    "le": "le: {x}",
    "compare.offset": "compare: {{where: {{fold: 0}}, offset: {x}}}",
    "compare.tol": "compare: {{where: {{fold: 0}}, op: eq, tol: {x}}}",
    "monotone.tol": "monotone: {{along: param_max_depth, tol: {x}}}",
}


def _config(tmp_path, key: str, x: str):
    p = tmp_path / "claims.yaml"
    p.write_text(CONFIG + "    " + CHECKS[key].format(x=x) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("x", [".nan", ".inf", "-.inf", "1e400", "-1.0e+400"])
@pytest.mark.parametrize("key", ["value", "abs", "ge", "compare.offset"])
def test_a_non_finite_number_is_refused_by_the_dry_run(tmp_path, key, x):
    cfg = _config(tmp_path, key, x)
    res = runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert f"claims.yaml: key `expect[0].{key}`: expected a finite number" in text
    assert "Traceback" not in res.output and "IndexError" not in res.output


@pytest.mark.parametrize("key", ["rel", "le", "compare.tol", "monotone.tol"])
def test_every_number_of_an_item_is_checked(tmp_path, key):
    cfg = _config(tmp_path, key, ".inf")
    res = runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert f"key `expect[0].{key}`: expected a finite number" in " ".join(res.output.split())


def test_verify_refuses_it_without_a_traceback(tmp_path):
    """The results were made with a good claim; the claim is then edited to ``.nan``."""
    cfg, out = _config(tmp_path, "value", "0.5"), tmp_path / "o"
    res = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    cfg.write_text(cfg.read_text().replace("value: 0.5", "value: .nan"), encoding="utf-8")
    for args in (["verify", str(out), "--config", str(cfg)],
                 ["run", str(cfg), "--out", str(out), "--verify", "--no-report"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert "key `expect[0].value`: expected a finite number" in " ".join(res.output.split())
        assert "Traceback" not in res.output


def test_finite_numbers_still_pass(tmp_path):
    cfg = _config(tmp_path, "value", "1e300")
    res = runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("key", list(CHECKS))
def test_a_boolean_is_no_number_of_a_claim(tmp_path, key):
    """`abs: true` read as a tolerance of 1 let every claim pass: a boolean is refused
    wherever a claim takes a number (when the config is read: `load_config`, as every command
    reads it)."""
    from treebench.config import load_config
    from treebench.errors import ConfigError

    for x in ("true", "yes", "false"):
        cfg = _config(tmp_path, key, x)
        with pytest.raises(ConfigError) as err:
            load_config(cfg)
        text = " ".join(str(err.value).split())
        assert f"key `expect[0].{key}`: expected a number, not a boolean" in text, text
    res = runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "not a boolean" in " ".join(res.output.split()), res.output
