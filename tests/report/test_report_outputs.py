"""Report outputs: files written atomically, seconds in one format, settings measured over
fewer folds flagged, a report of a folder of experiments, reference lines in the vs-depth
figures."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench.cli import app

from runs import run_quiet, tiny_config

runner = CliRunner()


def test_report_files_are_written_atomically(monkeypatch, tmp_path):
    """Ctrl-C in the middle of writing a report file leaves the old file whole."""
    from treebench.utils import atomic

    p = tmp_path / "index.html"
    p.write_text("old report")

    def boom(src, dst, *a, **k):  # the temporary file is written; Ctrl-C before the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_text(p, "new report")
    monkeypatch.undo()
    assert p.read_text() == "old report" and list(tmp_path.iterdir()) == [p]


def test_seconds_print_in_one_format():
    from treebench.report.tables import fmt_number, fmt_seconds

    for x in (1.234e-05, 0.00123, 0.5, 12.345, 1234.5):
        text = fmt_seconds(x)
        assert "e" not in text.lower()
        assert fmt_number("fit_seconds", x) == text


def test_settings_over_fewer_folds_are_flagged(tmp_path):
    from treebench.report.aggregate import aggregate
    from treebench.report.tables import ok_total

    rows = []
    for alg in ("a", "b"):
        for f in range(3):
            status = "timeout" if (alg == "b" and f == 2) else "ok"
            rows.append({"cell_id": f"{alg}{f}", "dataset": "d", "split": "kfold",
                         "binarizer": "raw", "binarizer_params": "{}", "algorithm_label": alg,
                         "fold": f, "status": status, "timed_out": None,
                         "test_accuracy": 0.5 if status == "ok" else None})
    s = aggregate(pd.DataFrame(rows), [])
    flags = dict(zip(s["algorithm_label"], s["folds_differ"], strict=True))
    assert flags == {"a": False, "b": True}
    assert ok_total(s[s["algorithm_label"] == "b"].iloc[0]) == "2/3†"


def test_report_on_a_folder_of_experiments(write_config, tmp_path, no_figures):
    root = tmp_path / "results"
    for name, depth in (("exp-a", [1, 2]), ("exp-b", [3])):
        cfg = tiny_config(name=name, split={"kind": "holdout", "seeds": [0]},
                          algorithms=[{"name": "cart", "params": {"max_depth": depth}}])
        run_quiet(write_config(cfg, f"{name}.yaml"), root / name)
    r = runner.invoke(app, ["report", str(root), "--format", "html,md,csv"])
    assert r.exit_code == 0, r.output
    html = (root / "index.html").read_text()
    assert "exp-a" in html and "exp-b" in html and "exp-a/report/index.html" in html
    for name in ("exp-a", "exp-b"):
        assert (root / name / "report" / "index.html").is_file()
    across = pd.read_csv(root / "across.csv")
    assert set(across["experiment"]) == {"exp-a", "exp-b"} and set(across["dataset"]) == {"iris"}
    md = (root / "index.md").read_text()
    assert "| exp-a | [nothing to check](exp-a/report/index.html#reproduction) | 2 | 2 |" in md, md


def test_vs_depth_figures_carry_reference_lines(tmp_path):
    from treebench.report.aggregate import load_results
    from treebench.report.figures import axis_figure
    from treebench.report.aggregate import sweep_axes

    from report.conftest import synthetic_table, write_results

    table = synthetic_table()
    # a reference learner without k: CART (its lines are drawn against depth, and are the
    # reference in the plots against k)
    res = load_results(write_results(tmp_path / "res", table))
    s = res.settings[res.settings["dataset"] == "car"]
    fig = axis_figure(res, "car", "param_k", ("test_accuracy",), sweep_axes(s, res.key_columns))
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any("[reference]" in t and t.startswith("cart") for t in labels), labels
