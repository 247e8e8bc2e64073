"""End-to-end report tests on a synthetic Top-k-like sweep with a CART baseline and failures."""

from __future__ import annotations

import json
import math
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from treebench.errors import UserError
from treebench.report import parse_formats, write_report

from .conftest import DATASETS, DEPTHS, FAILED, FOLDS, KS, accuracy, synthetic_table, write_results

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: the figures of the figure-cache tests: three per-dataset figures and the comparison figures
#: (drawn each time); all of them would only repeat the check
CACHED_FIGURES = ["test_accuracy_vs_max_depth", "n_leaves_vs_max_depth",
                  "test_accuracy_vs_n_leaves", "pareto_*"]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict[str, list[Path]]]:
    res = write_results(tmp_path_factory.mktemp("report") / "results", synthetic_table())
    return res / "report", write_report(res, formats=["html", "md", "csv", "latex", "svg"])


def _expected(dataset: str, algorithm: str, k, depth: int, train: bool) -> list[float]:
    fails = FAILED.get((dataset, k, depth), {}) if algorithm == "topk" else {}
    return [accuracy(dataset, algorithm, k, depth, f, train) for f in FOLDS if f not in fails]


def test_report_writes_every_kind_of_file(report):
    out, paths = report
    assert set(paths) == {"html", "md", "csv", "latex", "png", "svg"}
    assert paths["html"] == [out / "index.html"]
    assert out / "summary.md" in paths["md"]
    for name in ("summary", "test_accuracy", "train_accuracy", "n_leaves", "fit_seconds"):
        for ext in ("csv", "md", "tex"):
            assert (out / "tables" / f"{name}.{ext}").is_file(), (name, ext)
    assert (out / "tables" / "failures.csv").is_file()
    # `depth` is recorded but the config's `metrics` list does not ask for it
    assert not (out / "tables" / "depth.csv").exists()
    for kind in paths:
        for p in paths[kind]:
            assert p.is_file() and p.stat().st_size > 0, p
    stems = {p.stem for p in paths["png"]}
    assert stems == {p.stem for p in paths["svg"]}
    for d in DATASETS:
        for stem in ("test_accuracy_vs_max_depth",  # Top-k Figure 2
                     "train_test_accuracy_vs_k",  # Top-k Figure 4
                     "n_leaves_vs_max_depth", "fit_seconds_vs_k", "test_accuracy_vs_n_leaves"):
            assert f"{d}__{stem}" in stems
        # training accuracy is drawn with the test accuracy (dashed), not again on its own
        assert not any(s.startswith(f"{d}__train_accuracy_vs_") for s in stems)


def test_figures_are_valid_nonempty_images(report):
    import matplotlib.image as mpimg

    _, paths = report
    for p in paths["png"]:
        data = p.read_bytes()
        assert data[:8] == PNG_MAGIC, p
        assert len(data) > 10_000, p
        img = mpimg.imread(p)
        assert img.ndim == 3 and img.shape[0] >= 300 and img.shape[1] >= 500, (p, img.shape)
        assert img[..., :3].std() > 0.05, p  # not a blank canvas
    for p in paths["svg"]:
        text = p.read_text(encoding="utf-8")
        root = ET.fromstring(text)
        assert root.tag.endswith("svg")
        assert len(text) > 10_000
        assert "<dc:date>" not in text  # no timestamp: reproducible files


def test_metric_table_holds_mean_and_std_over_ok_folds(report):
    out, _ = report
    t = pd.read_csv(out / "tables" / "test_accuracy.csv", keep_default_na=False)
    assert len(t) == len(DATASETS) * (len(KS) + 1) * len(DEPTHS)
    for d in DATASETS:
        for depth in DEPTHS:
            for alg, k in [("cart", None)] + [("topk", k) for k in KS]:
                sel = (t["dataset"] == d) & (t["algorithm"] == alg) & (
                    t["max_depth"].astype(str) == str(depth))
                sel &= t["k"].astype(str) == ("" if k is None else str(k))
                row = t[sel]
                assert len(row) == 1, (d, alg, k, depth)
                row = row.iloc[0]
                vals = _expected(d, alg, k, depth, train=False)
                assert int(row["n"]) == len(vals) == int(row["n_ok"])
                assert int(row["n_total"]) == len(FOLDS)
                if vals:
                    assert float(row["mean"]) == pytest.approx(statistics.mean(vals))
                if len(vals) >= 2:
                    assert float(row["std"]) == pytest.approx(statistics.stdev(vals))
                else:
                    assert row["std"] == ""


def test_markdown_and_latex_show_mean_pm_std(report):
    out, _ = report
    vals = _expected("car", "topk", 2, 3, train=True)
    cell = f"{statistics.mean(vals):.3f} ± {statistics.stdev(vals):.3f}"
    md = (out / "tables" / "train_accuracy.md").read_text(encoding="utf-8")
    line = [ln for ln in md.splitlines() if ln.startswith("| car | topk | 2 | 3 |")]
    assert len(line) == 1 and cell in line[0]
    tex = (out / "tables" / "train_accuracy.tex").read_text(encoding="utf-8")
    assert cell.replace("±", "$\\pm$") in tex
    assert "\\toprule" in tex and "\\bottomrule" in tex and "max\\_depth" in tex
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert cell.split(" ± ")[0] in summary


def test_failed_and_timed_out_cells_are_counted_and_listed(report):
    out, _ = report
    t = pd.read_csv(out / "tables" / "summary.csv", keep_default_na=False)
    car = t[(t["dataset"] == "car") & (t["k"] == "all") & (t["max_depth"] == 4)].iloc[0]
    assert (car["n_ok"], car["n_timeout"], car["n_error"], car["n_failed"]) == (1, 1, 1, 2)
    anytime = t[(t["dataset"] == "car") & (t["k"] == "4") & (t["max_depth"] == 4)].iloc[0]
    assert (anytime["n_ok"], anytime["n_solver_timed_out"], anytime["n_failed"]) == (3, 1, 0)
    assert t["n_solver_timed_out"].sum() == 1
    ttt = t[(t["dataset"] == "tic-tac-toe") & (t["k"] == "all") & (t["max_depth"] == 4)].iloc[0]
    assert (ttt["n_ok"], ttt["n_timeout"], ttt["test_accuracy_mean"]) == (0, 3, "")
    md = (out / "tables" / "test_accuracy.md").read_text(encoding="utf-8")
    # † : averaged over fewer folds than the other settings of the dataset
    assert "| car | topk | all | 4 | 0.840 | 1/3† | 1 timeout, 1 error |" in md
    # no finished cell: no mean, so not "averaged over fewer folds"
    assert "| tic-tac-toe | topk | all | 4 | – | 0/3 | 3 timeout |" in md
    assert "| car | topk | 4 | 4 | " in md and "| 3/3 | 1 ok at solver time limit |" in md
    failed_ids = {f"{d}-topk-k{k}-d{depth}-f{f}" for (d, k, depth), fs in FAILED.items()
                  for f in fs}
    html = (out / "index.html").read_text(encoding="utf-8")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"Failures ({len(failed_ids)})" in html and f"Failures ({len(failed_ids)})" in summary
    for cid in failed_ids:
        assert cid in html and cid in summary
    assert "MemoryError: search &amp; prune failed" in html
    # summary rows with failed cells are highlighted; the anytime (ok) row is not
    # (2 settings with failures) x (summary + 4 metric tables: train/test accuracy, leaves, time)
    assert html.count('<tr class="failed') == 2 * 5
    fcsv = pd.read_csv(out / "tables" / "failures.csv")
    assert set(fcsv["cell_id"]) == failed_ids
    assert sorted(fcsv["status"]) == ["error"] + ["timeout"] * 4


def test_html_is_self_contained(report):
    out, paths = report
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<title>treebench report: topk_fig2</title>" in html
    # every figure once under "All figures", the headline ones a second time at the top
    import base64
    import re

    shown = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    want = {base64.b64encode(p.read_bytes()).decode("ascii") for p in paths["png"]}
    assert set(shown) == want and len(shown) >= len(want)
    assert "<link" not in html and "<script" not in html and "url(" not in html
    for attr in ("src=", "href="):
        for chunk in html.split(attr)[1:]:
            assert chunk.startswith('"data:') or chunk.startswith('"#'), chunk[:40]
    assert "environment.numpy" in html and "2026-01-01T00:00:00Z" in html
    assert "Resolved configuration" in html
    assert "<p>Top-k vs CART, depth sweep</p>" in html
    _assert_balanced_tags(html)


def _assert_balanced_tags(text: str) -> None:
    from html.parser import HTMLParser

    void = {"meta", "img", "br", "hr", "link", "input"}
    stack: list[str] = []
    errors: list[str] = []

    class Checker(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in void:
                stack.append(tag)

        def handle_endtag(self, tag):
            if stack and stack[-1] == tag:
                stack.pop()
            else:
                errors.append(tag)

    Checker().feed(text)
    assert not errors and stack == []


def test_markdown_summary_links_existing_files(report):
    out, _ = report
    md = (out / "summary.md").read_text(encoding="utf-8")
    links = [seg.split(")")[0] for seg in md.split("](")[1:]]
    assert any(link.startswith("figures/") for link in links)
    assert any(link.startswith("tables/") for link in links)
    for link in links:
        assert (out / link).is_file(), link


def test_reports_are_byte_identical_across_runs(tmp_path):
    table = synthetic_table()
    table = table[(table["dataset"] == "car") & (table["param_max_depth"] == 4)
                  & table["param_k"].isin([None, 4, "all"])]  # incl. the failed setting
    res = write_results(tmp_path / "res", table.reset_index(drop=True))
    a = write_report(res, tmp_path / "a", formats=["html", "csv", "svg"])
    b = write_report(res, tmp_path / "b", formats=["html", "csv", "svg"])
    assert a["svg"] and a["png"]
    for pa, pb in zip(sum(a.values(), []), sum(b.values(), []), strict=True):
        assert pa.name == pb.name
        assert pa.read_bytes() == pb.read_bytes(), pa.name


def test_missing_or_damaged_results_raise_user_error(tmp_path):
    with pytest.raises(UserError, match="results.parquet"):
        write_report(tmp_path)
    (tmp_path / "results.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(UserError, match="Cannot read"):
        write_report(tmp_path)


def test_unknown_format_raises_user_error(results_dir):
    with pytest.raises(UserError, match="Unknown report format `pdf`"):
        write_report(results_dir, formats=["html", "pdf"])
    with pytest.raises(UserError, match="did you mean `html`"):
        parse_formats("htlm")
    assert parse_formats("csv, tex,html") == ["html", "csv", "latex"]


def test_only_requested_formats_are_written(results_dir, tmp_path):
    out = tmp_path / "only_csv"
    paths = write_report(results_dir, out, formats=["csv"], figures=False)
    assert set(paths) == {"csv"}
    assert not (out / "index.html").exists() and not (out / "figures").exists()
    assert not list((out / "tables").glob("*.md")) and not list((out / "tables").glob("*.tex"))


def test_default_output_is_results_dir_report(results_dir):
    paths = write_report(results_dir, formats=["md"], figures=False)
    assert paths["md"][0] == results_dir / "report" / "summary.md"


def test_empty_results_table_gives_a_report(tmp_path):
    res = write_results(tmp_path / "res", synthetic_table().iloc[0:0], manifest={})
    paths = write_report(res)
    assert "has no rows" in paths["html"][0].read_text(encoding="utf-8")
    assert "png" not in paths


def test_manifest_is_optional(tmp_path):
    res = write_results(tmp_path / "res", synthetic_table().head(6))
    (res / "manifest.json").unlink()
    paths = write_report(res, formats=["md"], figures=False)
    text = paths["md"][0].read_text(encoding="utf-8")
    assert "# treebench report: topk_fig2" in text and "manifest.json is missing" in text


def test_csv_values_are_numbers_not_sentinels(report):
    out, _ = report
    t = pd.read_csv(out / "tables" / "fit_seconds.csv")
    assert not (t["mean"] < 0).any()
    assert t["mean"].isna().sum() == 1  # the tic-tac-toe setting where every cell timed out
    assert math.isfinite(t["mean"].max())
    assert json.loads(t["binarizer_params"].iloc[0]) == {"n_thresholds": 8}


def test_axes_are_per_dataset_and_stale_figures_go(tmp_path):
    """A binarizer budget that differs between datasets (avila's 100 beside 200) is no sweep
    axis of either dataset; a second report leaves no figure of the first behind."""
    table = synthetic_table()
    table["bparam_max_splits"] = [100 if d == DATASETS[0] else 200 for d in table["dataset"]]
    table["binarizer_params"] = pd.Series([json.dumps({"max_splits": v}) for v in table["bparam_max_splits"]],
                                          dtype="string", index=table.index)
    earlier = table.copy()
    earlier["dataset"] = earlier["dataset"].replace({DATASETS[0]: "olddata"}).astype("string")
    res = write_results(tmp_path / "results", earlier)
    write_report(res, formats=("md",))
    figs = res / "report" / "figures"
    assert any(p.name.startswith("olddata__") for p in figs.iterdir())
    (figs / "mine.png").write_bytes(b"x")  # a user's own image: no report wrote it
    res = write_results(tmp_path / "results", table)
    write_report(res, formats=("md",))
    names = [p.name for p in figs.iterdir()]
    assert names and not any("max_splits" in n for n in names)
    assert not any(n.startswith("olddata__") for n in names)
    assert (figs / "mine.png").read_bytes() == b"x"


def test_figure_files_of_dotted_dataset_names_are_distinct(tmp_path):
    """File datasets are named like ``x.csv``; every figure keeps its own file."""
    table = synthetic_table()
    table["dataset"] = table["dataset"].map({"car": "car.data.csv", "tic-tac-toe": "x.csv"}).astype("string")
    res = write_results(tmp_path / "res", table,
                        figures=["test_accuracy_vs_max_depth", "pareto_*", "test_accuracy_vs_n_leaves"])
    paths = write_report(res, formats=["html", "svg"])
    for kind in ("png", "svg"):
        names = [p.name for p in paths[kind]]
        assert len(names) == len(set(names)) >= 3 * len(DATASETS)
        assert all(p.is_file() for p in paths[kind])
    on_disk = {p.name for p in (res / "report" / "figures").glob("*.png")}
    assert on_disk == {p.name for p in paths["png"]}
    assert "x.csv__test_accuracy_vs_max_depth.png" in on_disk


def test_dollar_signs_are_text_and_names_sharing_a_slug_keep_their_figures(tmp_path):
    """Labels are drawn as written: ``cost $\\x$`` was parsed as math (an error that stopped the
    report before its pages) and ``$5 and $6`` drawn as a formula. Two dataset names with one
    slug (``data set``, ``data-set``) get figure files of their own in every kind, the Pareto
    plots included (they collided, and the report stopped)."""
    table = synthetic_table()
    table["dataset"] = table["dataset"].map({"car": "data set", "tic-tac-toe": "data-set"}) \
        .astype("string")
    table["algorithm_label"] = table["algorithm_label"].map(
        {"cart": "cost $\\x$", "topk": "top $5 and $6"}).astype("string")
    # the figures that draw the labels: the Pareto plots and one per-dataset figure
    res = write_results(tmp_path / "res", table, figures=["pareto_*", "test_accuracy_vs_k"])
    paths = write_report(res, formats=["html", "md"])
    names = [p.name for p in paths["png"]]
    assert len(names) == len(set(names))
    pareto = [n for n in names if "__pareto_" in n]
    assert len(pareto) == 2 and len({n.split("__")[0] for n in pareto}) == 2
    html = (res / "report" / "index.html").read_text(encoding="utf-8")
    assert "cost $\\x$" in html


def test_markdown_pages_show_names_as_text(tmp_path):
    """summary.md and the Markdown tables are rendered (the docs site builds pages from
    reports): an HTML tag in a name stayed a tag, `*x*` became emphasis, and a name with a
    blank line ended its heading and its figure's alt text."""
    table = synthetic_table()
    table["dataset"] = table["dataset"].map(
        {"car": "<img src=x onerror=alert(1)>", "tic-tac-toe": "multi\n\nline *x* _u_"}) \
        .astype("string")
    table["algorithm_label"] = table["algorithm_label"].map(
        {"cart": "cart [a](http://x)", "topk": "top|k"}).astype("string")
    res = write_results(tmp_path / "res", table, figures=["test_accuracy_vs_n_leaves"])
    write_report(res, formats=["md"])
    text = (res / "report" / "summary.md").read_text(encoding="utf-8")
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "### multi  line \\*x\\* \\_u\\_" in text
    assert "[a](http://x)" not in text and "cart \\[a\\](http://x)" in text
    assert "top\\|k" in text
    for line in text.splitlines():
        assert not line.startswith("line "), line  # no name broke onto a line of its own
    tables = (res / "report" / "tables" / "summary.md").read_text(encoding="utf-8")
    assert "<img" not in tables and "&lt;img" in tables


def test_dataset_stems_are_unique_and_stable():
    from treebench.report.figures import FigureInfo, check_unique, dataset_stems

    names = ["a b", "a-b", "A-B", "x.csv", "y"]
    stems = dataset_stems(names)
    assert len({s.lower() for s in stems.values()}) == len(names)
    assert stems == dataset_stems(list(reversed(names)))
    assert stems["x.csv"] == "x.csv" and stems["y"] == "y"
    with pytest.raises(RuntimeError, match="share the file"):
        check_unique([FigureInfo("a", "s", "t1", {"png": Path("f/s.png")}),
                      FigureInfo("b", "s", "t2", {"png": Path("f/s.png")})])


def test_png_by_default_svg_on_request_and_unchanged_figures_are_kept(tmp_path):
    table = synthetic_table()
    res = write_results(tmp_path / "res", table[table["dataset"] == "car"].reset_index(drop=True),
                        figures=CACHED_FIGURES)
    paths = write_report(res, formats=["md"])
    assert "svg" not in paths and paths["png"]
    # the per-dataset figures of `figures.py` (the comparison figures are drawn each time)
    ours = [p for p in paths["png"] if "pareto" not in p.name and "critical_difference" not in p.name]
    mtimes = {p: p.stat().st_mtime_ns for p in ours}
    again = write_report(res, formats=["md"])
    assert again["png"] == paths["png"]
    assert {p: p.stat().st_mtime_ns for p in ours} == mtimes  # not redrawn
    with_svg = write_report(res, formats=["md", "svg"])
    assert len(with_svg["svg"]) == len(with_svg["png"])
    assert not list((res / "report" / "figures").glob(".*.tmp"))


def test_figures_are_drawn_again_when_the_drawing_code_changes(tmp_path, monkeypatch):
    """The drawing code is an input of every figure: a report made by an edited or upgraded
    treebench (another key of its modules' files) draws each figure again instead of keeping
    a picture the old code drew; the same code keeps them."""
    from treebench.report import figures

    table = synthetic_table()
    res = write_results(tmp_path / "res", table[table["dataset"] == "car"].reset_index(drop=True),
                        figures=CACHED_FIGURES)
    paths = write_report(res, formats=["md"])
    ours = [p for p in paths["png"] if "pareto" not in p.name and "critical_difference" not in p.name]
    mtimes = {p: p.stat().st_mtime_ns for p in ours}
    write_report(res, formats=["md"])  # the same code keeps them
    assert {p: p.stat().st_mtime_ns for p in ours} == mtimes
    monkeypatch.setattr(figures, "files_key", lambda root: "another version of treebench")
    write_report(res, formats=["md"])
    assert all(p.stat().st_mtime_ns != mtimes[p] for p in ours)


def test_a_plugin_figure_kinds_drawing_file_is_part_of_the_key(tmp_path):
    from treebench.report import figures

    draw = tmp_path / "plugin_draw.py"
    draw.write_text("def draw(results, job):\n    return None\n", encoding="utf-8")
    ns: dict = {}
    exec(compile(draw.read_text(), str(draw), "exec"), ns)
    figures.register_figures("test-plugin-kind", lambda results: [], ns["draw"])
    try:
        before = figures.drawing_code_key({"test-plugin-kind"})
        assert str(draw) in before and before == figures.drawing_code_key({"test-plugin-kind"})
        draw.write_text("def draw(results, job):\n    return None  # edited\n",
                        encoding="utf-8")
        assert figures.drawing_code_key({"test-plugin-kind"}) != before
        assert str(draw) not in figures.drawing_code_key({"axis"})  # built-in: the package key
    finally:
        from treebench.registry import FIGURES

        FIGURES.unregister("test-plugin-kind")


def test_a_damaged_figure_file_is_drawn_again(tmp_path):
    """A figure is reused only when its file is the one the report wrote: a truncated or
    overwritten file is drawn again like a deleted one, the others are kept."""
    table = synthetic_table()
    res = write_results(tmp_path / "res", table[table["dataset"] == "car"].reset_index(drop=True),
                        figures=CACHED_FIGURES)
    paths = write_report(res, formats=["md"])
    ours = [p for p in paths["png"] if "pareto" not in p.name and "critical_difference" not in p.name]
    good = ours[0].read_bytes()
    with open(ours[0], "r+b") as fh:
        fh.truncate(100)
    ours[1].write_bytes(b"not a png")
    kept = {p: p.stat().st_mtime_ns for p in ours[2:]}
    write_report(res, formats=["md"])
    assert ours[0].read_bytes() == good
    assert ours[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert {p: p.stat().st_mtime_ns for p in ours[2:]} == kept


def test_the_failures_table_names_each_failed_cells_seed(tmp_path, no_figures):
    """Holdout cells of several seeds share fold 0: the failures table (CSV, Markdown, HTML)
    gives each failed cell's seed, so two failures of one setting are told apart."""
    table = synthetic_table()
    failed = table["status"] != "ok"
    table.loc[failed, "seed"] = range(11, 11 + int(failed.sum()))
    res = write_results(tmp_path / "results", table)
    write_report(res, formats=["html", "md", "csv"])
    fcsv = pd.read_csv(res / "report" / "tables" / "failures.csv")
    want = dict(zip(table.loc[failed, "cell_id"], table.loc[failed, "seed"], strict=True))
    assert dict(zip(fcsv["cell_id"], fcsv["seed"], strict=True)) == want
    md = (res / "report" / "summary.md").read_text(encoding="utf-8")
    assert "| fold | seed | status |" in md
    for cid, seed in want.items():
        assert any(cid in line and f"| {seed} |" in line for line in md.splitlines()), cid
