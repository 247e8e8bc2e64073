"""The README's one example is a config that runs: 35 cells, every family beside CART, and the
commands it shows find and print a cell."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from treebench.cli import app

from ._paths import ROOT


def test_the_readme_example_runs_and_its_cells_are_found(tmp_path, monkeypatch):
    from sklearn.datasets import load_breast_cancer

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    config = re.search(r"```yaml\n(# my-first.yaml.*?)```", text, re.S).group(1)
    frame = load_breast_cancer(as_frame=True).frame.iloc[:, [0, 1, 2, 3, 4, 5, 30]]
    frame.columns = ["radius", "texture", "perimeter", "area", "smoothness", "compactness",
                     "target"]
    monkeypatch.chdir(tmp_path)
    frame.to_csv("my.csv", index=False)
    (tmp_path / "my-first.yaml").write_text(config, encoding="utf-8")
    run = CliRunner().invoke
    r = run(app, ["run", "my-first.yaml", "--quiet", "--no-report"])
    assert r.exit_code == 0 and "35 cells (ok 35" in r.output, r.output
    algorithms = run(app, ["cells", "results/my-first", "--ids", "--where", "fold=0"])
    assert len(algorithms.output.split()) == 7  # 2 CART + 2 Top-k + DPDT + GOSDT + ECART
    r = run(app, ["show", "results/my-first", "--where", "algorithm=topk k=4 fold=0"])
    assert r.exit_code == 0 and r.output.startswith("# cell ") and "if " in r.output, r.output
