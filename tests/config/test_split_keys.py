"""A ``split:`` key that its ``kind`` does not read is refused when the config is read (it
changed the recorded ``split_params`` and the cell ids and nothing else), and a
``train-val-test`` split whose ``test_size`` and ``valid_size`` leave no training rows is
refused before anything runs: one sentence naming the keys, and exit code 2."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from treebench.cli import app
from treebench.config.schema import SplitSpec

runner = CliRunner()

CONFIG = """\
name: base
datasets: [iris, wine]
split: {split}
binarization: [{{method: raw}}]
algorithms: [{{name: cart, params: {{max_depth: [1, 2]}}}}]
execution: {{n_jobs: 1, backend: sequential}}
"""


def _dry_run(tmp_path, split: str):
    p = tmp_path / "base.yaml"
    p.write_text(CONFIG.format(split=split), encoding="utf-8")
    res = runner.invoke(app, ["run", str(p), "--dry-run", "--out", str(tmp_path / "o")])
    return res, " ".join(res.output.split())


@pytest.mark.parametrize(("split", "words"), [
    ("{kind: holdout, test_size: 0.6, train_size: 0.6}",
     "`train_size` does not apply to `kind: holdout`, which takes test_size, stratify, "
     "unstratifiable, seeds, test_files (`train_size` goes with kind permutation)"),
    ("{kind: permutation, train_size: 0.9, test_size: 0.5}",
     "`test_size` does not apply to `kind: permutation`, which takes train_size, seeds, "
     "test_files (`test_size` goes with kind holdout or train-val-test)"),
    ("{kind: full, n_splits: 7}", "`n_splits` does not apply to `kind: full`"),
    ("{kind: kfold, n_splits: 3, test_size: 0.3}", "`test_size` does not apply to `kind: kfold`"),
    ("{test_size: 0.3}", "`test_size` does not apply to `kind: kfold`"),
    ("{kind: predefined, valid_size: 0.2}", "`valid_size` does not apply to `kind: predefined`"),
    ("{kind: permutation, stratify: false}", "`stratify` does not apply to `kind: permutation`"),
    ("{kind: holdout, n_splits: 3, train_size: 0.5}",
     "`n_splits` and `train_size` do not apply to `kind: holdout`"),
])
def test_a_key_the_kind_does_not_read_is_refused(tmp_path, split, words):
    res, text = _dry_run(tmp_path, split)
    assert res.exit_code == 2, res.output
    assert f"base.yaml: key `split`: {words}" in text
    assert "Traceback" not in res.output


def test_a_dataset_split_is_checked_the_same_way(tmp_path):
    p = tmp_path / "base.yaml"
    p.write_text(CONFIG.format(split="{kind: kfold}").replace(
        "datasets: [iris, wine]", "datasets: [iris, {name: wine, split: {kind: full, seeds: [1], "
        "train_size: 0.5}}]"), encoding="utf-8")
    res = runner.invoke(app, ["run", str(p), "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert "key `datasets[1].split`: `train_size` does not apply to `kind: full`" in \
        " ".join(res.output.split())


@pytest.mark.parametrize(("split", "total"), [
    ("{kind: train-val-test, test_size: 0.6, valid_size: 0.6}", "1.2"),
    ("{kind: train-val-test, test_size: 0.7, valid_size: 0.3}", "1"),
    ("{kind: train-val-test, valid_size: 0.8}", "1"),  # test_size's default, 0.2
])
def test_sizes_that_leave_no_training_rows_are_refused(tmp_path, split, total):
    res, text = _dry_run(tmp_path, split)
    assert res.exit_code == 2, res.output
    assert "key `split`: `test_size`" in text and "and `valid_size`" in text
    assert f"add up to {total}, leaving no training rows; keep their sum below 1" in text


@pytest.mark.parametrize("split", [
    "{kind: kfold, n_splits: 3, stratify: false, unstratifiable: error, seeds: [0, 1]}",
    "{kind: holdout, test_size: 0.25, seeds: 0..4}",
    "{kind: permutation, train_size: 0.8, seeds: 42..44}",
    "{kind: train-val-test, test_size: 0.6, valid_size: 0.3}",
    "{kind: full, seeds: [3]}",
    "{kind: kfold, test_files: merge}",
    "{kind: holdout, train_size: 0.8}",  # the default value: nothing changes
])
def test_keys_the_kind_reads_still_load(tmp_path, split):
    res, _ = _dry_run(tmp_path, split)
    assert res.exit_code == 0, res.output


def test_a_dump_of_a_split_validates_again():
    """A sweep validates the config's dump, which gives every key at its value."""
    for spec in (SplitSpec(kind="holdout", test_size=0.3), SplitSpec(kind="full"),
                 SplitSpec(kind="predefined"),
                 SplitSpec(kind="train-val-test", test_size=0.5, valid_size=0.4)):
        assert SplitSpec.model_validate(spec.model_dump()) == spec
    with pytest.raises(ValidationError, match="`train_size` does not apply"):
        SplitSpec.model_validate({**SplitSpec(kind="holdout").model_dump(), "train_size": 0.5})


def test_a_seed_written_twice_is_one_seed(tmp_path):
    """`seeds: [0, 0]` made the same cells twice over and the summary said "2 seeds"; a seed
    is kept once, in the order first written."""
    assert SplitSpec(kind="kfold", seeds=[3, 0, 3, 1.0, 1]).seeds == [3, 0, 1]
    p = tmp_path / "base.yaml"
    p.write_text(CONFIG.format(split="{kind: holdout, seeds: [0, 0]}"), encoding="utf-8")
    res = runner.invoke(app, ["run", str(p), "--no-report", "--out", str(tmp_path / "o")])
    out = " ".join(res.output.split())
    assert res.exit_code == 0, out
    assert "x 1 seed" in out and "2 seeds" not in out and "4 cells" in out, out
