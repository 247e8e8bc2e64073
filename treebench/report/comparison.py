"""Figures that compare algorithm settings: Pareto plots of accuracy against tree size (per
dataset, `pareto`) and critical-difference diagrams over datasets (`critical_difference`).

Registered with `figures.register_figures`: `figures.write_figures` draws them with the other
figures (in parallel, and only when their inputs changed: a content hash of the settings each
one shows is stored beside the figures); cross-dataset figures carry the dataset label
`ALL_DATASETS`.
"""

from __future__ import annotations

from treebench.report.aggregate import Results, distinct
from treebench.report.figures import ALL_DATASETS, FigureJob, dataset_stem, make_job, register_figures, slug
from treebench.report.critical_difference import cd_figure, ranking, ranking_groups
from treebench.report.pareto import pareto_figure, SIZES

__all__ = ["ALL_DATASETS", "CD_METRICS", "comparison_jobs"]
#: metrics ranked in critical-difference diagrams: test accuracy always, the others when the
#: config's `metrics:` list names them (the NGI paper ranks AUC and expected cost)
CD_METRICS = (("test_accuracy", "test accuracy"), ("test_roc_auc", "test ROC AUC"),
              ("expected_cost_test", "expected test cost"))


def comparison_jobs(results: Results) -> list[FigureJob]:
    """Critical-difference diagrams (one per ranked metric and depth group) and Pareto plots
    (one per dataset and size measure)."""
    jobs: list[FigureJob] = []
    for metric, label in CD_METRICS:
        if metric != "test_accuracy" and metric not in results.metrics:
            continue  # other metrics are ranked when the config's `metrics:` names them
        if metric not in results.table.columns:
            continue
        tail = "" if metric == "test_accuracy" else f"_{slug(metric)}"
        for where, what in ranking_groups(results):
            stem = f"all-datasets__critical_difference{tail}_{slug(what)}"
            jobs.append(make_job(stem, ALL_DATASETS, "critical_difference",
                                 (metric, label, tuple(where.items()), what)))
    for dataset in distinct(results.settings["dataset"]):
        for col, label, suffix in SIZES:
            jobs.append(make_job(f"{dataset_stem(results, dataset)}__pareto_test_accuracy_vs_{suffix}", dataset,
                                 "pareto", (col, label)))
    return jobs


def _draw_cd(results: Results, job: FigureJob):
    metric, label, where, what = job.extra
    r = ranking(results, metric, dict(where), what)
    if r is None:
        return None
    return cd_figure(r, label), f"Critical difference: {label} ranks over datasets, {r.title}"


def _draw_pareto(results: Results, job: FigureJob):
    col, label = job.extra
    fig = pareto_figure(results, job.dataset, col, label)
    return None if fig is None else (fig, fig.axes[0].get_title())


register_figures("critical_difference", comparison_jobs, _draw_cd, order=2)  # often nothing
register_figures("pareto", lambda results: [], _draw_pareto,
                 order=0)  # labelled points: two to three times an axis figure
