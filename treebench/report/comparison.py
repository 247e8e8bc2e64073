"""Figures that compare algorithm settings: Pareto plots of accuracy against tree size (per
dataset, `pareto`) and critical-difference diagrams over datasets (`critical_difference`).

Written after `figures.write_figures` (which clears the folder first) into the same
``figures/`` folder; cross-dataset figures carry the dataset label `ALL_DATASETS`.
"""

from __future__ import annotations

from pathlib import Path

from treebench.report.aggregate import Results, distinct
from treebench.report.figures import RC, FigureInfo, save, slug

ALL_DATASETS = "all datasets"
#: metrics ranked in critical-difference diagrams: test accuracy always, the others when the
#: config's `metrics:` list names them (the NGI paper ranks AUC and expected cost)
CD_METRICS = (("test_accuracy", "test accuracy"), ("test_roc_auc", "test ROC AUC"),
              ("expected_cost_test", "expected test cost"))


def write_comparison_figures(results: Results, out: Path,
                             formats: tuple[str, ...] = ("png", "svg")) -> list[FigureInfo]:
    import matplotlib

    from treebench.report.critical_difference import cd_figure, rankings
    from treebench.report.pareto import SIZES, pareto_figure

    fdir = out / "figures"
    fdir.mkdir(parents=True, exist_ok=True)
    infos: list[FigureInfo] = []
    if results.settings.empty:
        return infos
    with matplotlib.rc_context(RC):
        for metric, label in CD_METRICS:
            if metric != "test_accuracy" and metric not in results.metrics:
                continue  # other metrics are ranked when the config's `metrics:` names them
            for r in rankings(results, metric):
                fig = cd_figure(r, label)
                tail = "" if metric == "test_accuracy" else f"_{slug(metric)}"
                stem = f"all-datasets__critical_difference{tail}_{slug(r.title)}"
                title = f"Critical difference: {label} ranks over datasets, {r.title}"
                infos.append(FigureInfo(ALL_DATASETS, stem, title,
                                        save(fig, fdir / stem, title, formats)))
        for dataset in distinct(results.settings["dataset"]):
            for col, label, suffix in SIZES:
                fig = pareto_figure(results, dataset, col, label)
                if fig is None:
                    continue
                stem = f"{slug(dataset)}__pareto_test_accuracy_vs_{suffix}"
                title = fig.axes[0].get_title()
                infos.append(FigureInfo(dataset, stem, title, save(fig, fdir / stem, title,
                                                                   formats)))
    return infos
