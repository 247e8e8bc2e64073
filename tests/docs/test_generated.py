"""The generated parts of the site cover the code: the config reference lists every config key
of the schema, and every paper config has its claims on a reproduction page."""

from __future__ import annotations

import re

import yaml

from ._paths import DOCS, HOOKS, ROOT, load

config_reference = load(HOOKS / "config_reference.py")
reproductions = load(HOOKS / "reproductions.py")


def test_config_reference_has_every_key_with_type_default_and_description():
    from treebench.config import Experiment

    text, problems = config_reference.generate()
    assert problems == [], problems
    top = text.split("### ", 2)[1]  # the top-level section
    for key in Experiment.model_fields:
        assert re.search(rf"^\| `{key}` \| .+ \| .+ \| .+ \|$", top, re.M), key
    # nested models reached from the top level, e.g. split.kind and its choices
    assert "{#config-splitspec}" in text and '`"train-val-test"`' in text
    assert "| `n_splits` | int (≥ 2) | `5` |" in text


def test_config_reference_flags_an_undescribed_key_and_a_stale_entry():
    extra = config_reference.load_extra()
    extra["Experiment"] = {k: v for k, v in extra["Experiment"].items() if k != "seed"}
    extra.setdefault("SplitSpec", {})["no_such_key"] = "x"
    _, problems = config_reference.generate(extra)
    assert any("`Experiment.seed` has no description" in p for p in problems)
    assert any("`SplitSpec.no_such_key`" in p for p in problems)


def test_config_reference_is_on_the_configs_page():
    assert config_reference.MARKER in (DOCS / "configs.md").read_text(encoding="utf-8")


def test_every_paper_config_has_a_claims_section():
    marked = set()
    for page in (DOCS / "reproductions").glob("*.md"):
        marked |= set(reproductions.MARKER.findall(page.read_text(encoding="utf-8")))
    paper = {f"configs/{p.name}" for p in reproductions.paper_configs()}
    assert paper and paper <= marked, sorted(paper - marked)
    assert all((ROOT / m).is_file() for m in marked)


def test_claims_table_has_one_row_per_expect_item():
    path = ROOT / "configs" / "topk-figure4.yaml"
    items = reproductions.expectations(yaml.safe_load(path.read_text(encoding="utf-8")))
    table = reproductions.claims_table(items)
    assert len(table.splitlines()) == 2 + len(items)
    assert "car: train, k=1" in table and "= 0.8049 ± 6e-05" in table
    assert "increasing along param_k" in table


def test_measured_results_are_shown_when_a_reproduce_folder_exists(tmp_path, monkeypatch):
    report = tmp_path / "ngi-iris" / "report"
    (report / "tables").mkdir(parents=True)
    (report / "figures").mkdir()
    (report / "figures" / "iris__x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (report / "tables" / "reproduction.md").write_text(
        "| expectation | result |\n|:---|:---|\n| test AUC | pass |\n")
    (report / "summary.md").write_text(
        "# r\n\n## Reproduction\n\n**ngi-iris (profile ci): all 1 expectation(s) hold**\n\n"
        "## Headline figures\n\n![iris: x](figures/iris__x.png)\n\n## Summary\n")
    monkeypatch.setenv("REPRO_OUT", str(tmp_path))
    text = reproductions.section("configs/ngi-iris.yaml")
    assert "**ngi-iris (profile ci): all 1 expectation(s) hold**" in text
    assert "| test AUC | pass |" in text and "![iris: x](figures/ngi-iris/iris__x.png)" in text
    monkeypatch.setenv("REPRO_OUT", str(tmp_path / "none"))
    assert "No measured results in this build" in reproductions.section("configs/ngi-iris.yaml")


results_columns = load(HOOKS / "results_columns.py")


def test_results_columns_page_is_generated_from_the_declarations():
    """The page carries the generated list (every declared column of every learner, with its
    dtype, once), and its hand-written summary names the shared solver columns as declared."""
    from treebench.algorithms.solve_info import SOLVE_INFO_KEYS
    from treebench.results.schema import declared

    page = (DOCS / "results-columns.md").read_text(encoding="utf-8")
    assert results_columns.MARKER in page
    text = results_columns.generate()
    for name, col in declared(None).items():
        assert text.count(f"| `{name}` | {col.dtype} |") == 1, name
    assert "`reference_bound` | Float64 | the learner (`solve_info_`): `gosdt`, `gosdt-ref`" in text
    shared = re.search(r"^\| solver status shared by learners: (.+) \| the learner base", page, re.M)
    assert shared and re.findall(r"`(\w+)`", shared.group(1)) == list(SOLVE_INFO_KEYS)
