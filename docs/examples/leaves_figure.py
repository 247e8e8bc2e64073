"""A new figure: per dataset, the mean number of leaves of every algorithm as bars.

The figure recipe of docs/extending.md. A plug-in package names this module in its
``treebench.figures`` entry point; tests/docs/test_extending.py installs it that way, runs an
experiment and finds the figure in the report.
"""

from __future__ import annotations

from treebench.report.aggregate import Results, distinct
from treebench.report.figures import FigureJob, make_job, register_figures
from treebench.utils.text import slug


def leaves_jobs(results: Results) -> list[FigureJob]:
    """One file per dataset: ``figures/<dataset>__leaves_by_algorithm.png``."""
    if "n_leaves_mean" not in results.settings:
        return []
    return [make_job(f"{slug(d)}__leaves_by_algorithm", d, "leaves_by_algorithm")
            for d in distinct(results.settings["dataset"])]


def draw_leaves(results: Results, job: FigureJob):
    """(figure, title), or None when the dataset has no finished cell."""
    import matplotlib.pyplot as plt

    s = results.settings[results.settings["dataset"] == job.dataset]
    means = s.groupby("algorithm_label")["n_leaves_mean"].mean().dropna()
    if means.empty:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(means.index.astype(str), means.to_numpy())
    ax.set_ylabel("leaves (mean over settings)")
    title = f"{job.dataset}: leaves by algorithm"
    ax.set_title(title)
    return fig, title


register_figures("leaves_by_algorithm", leaves_jobs, draw_leaves)
