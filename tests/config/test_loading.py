"""The one dotted-key setter (`set_dotted_key`) that profiles and command-line overrides use:
mapping keys and list indices, clear errors, the same result through either path."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.config import apply_profile, load_config, set_dotted_key
from treebench.errors import ConfigError


def test_mapping_keys_are_created_and_list_items_indexed():
    raw = {"algorithms": [{"name": "cart", "params": {}}, {"name": "topk"}]}
    set_dotted_key(raw, "limits.time", 30)
    set_dotted_key(raw, "algorithms.0.params.max_depth", 3)
    set_dotted_key(raw, "algorithms.1.params.k", [1, 2])
    set_dotted_key(raw, "algorithms.1.name", "greedy")
    assert raw == {"limits": {"time": 30},
                   "algorithms": [{"name": "cart", "params": {"max_depth": 3}},
                                  {"name": "greedy", "params": {"k": [1, 2]}}]}


def test_a_digit_key_of_a_mapping_stays_a_key():
    raw = {"label_map": {}}
    set_dotted_key(raw, "label_map.1", "yes")
    assert raw == {"label_map": {"1": "yes"}}


@pytest.mark.parametrize(("raw", "key", "match"), [
    ({"algorithms": [{"name": "cart"}]}, "algorithms.1.params.k",
     r"key `algorithms.1.params.k`: `1` is no index of `algorithms`, a list of 1 item"),
    ({"algorithms": [{"name": "cart"}]}, "algorithms.first.name", r"`first` is no index of `algorithms`"),
    ({"limits": None}, "limits.time", r"`limits` holds None, not a mapping or a list, so it has no `time`"),
    ({"seed": 3}, "seed.value", r"`seed` holds 3, not a mapping"),
    ({"limits": {}}, "limits..time", r"a name between every two dots"),
])
def test_bad_paths_are_config_errors_naming_the_key(raw, key, match):
    before = repr(raw)
    with pytest.raises(ConfigError, match=match):
        set_dotted_key(raw, key, 1)
    assert repr(raw) == before  # a refused key changes nothing


CONFIG = {"name": "setter", "datasets": ["iris"], "split": {"kind": "holdout"},
          "algorithms": [{"name": "cart", "params": {"max_depth": 2}}],
          "profiles": {"deeper": {"algorithms.0.params.max_depth": 4, "limits.time": 9}}}


def test_overrides_and_profiles_set_the_same_values(tmp_path):
    """A dotted key means the same in a profile and in an override (an override into a list
    used to fail with a traceback)."""
    path = tmp_path / "setter.yaml"
    path.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    by_profile = load_config(path, profile="deeper")
    by_override = load_config(path, {"algorithms.0.params.max_depth": 4, "limits.time": 9})
    assert by_profile.algorithms == by_override.algorithms
    assert by_profile.limits == by_override.limits
    assert by_profile.algorithms[0].params == {"max_depth": 4} and by_profile.limits.time == 9
    assert apply_profile(CONFIG, "deeper")["algorithms"][0]["params"] == {"max_depth": 4}


def test_limit_flag_on_an_empty_limits_key_is_a_clear_error(tmp_path, monkeypatch):
    """``limits:`` left empty, then ``--time-limit``: one sentence and exit code 2 (it used to
    be a TypeError traceback)."""
    monkeypatch.chdir(tmp_path)
    cfg = {k: v for k, v in CONFIG.items() if k != "profiles"}
    (tmp_path / "empty-limits.yaml").write_text(yaml.safe_dump(cfg) + "limits:\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["run", "empty-limits.yaml", "--dry-run", "--time-limit", "5"])
    assert res.exit_code == 2, res.output
    assert "empty-limits.yaml: key `limits.time`: `limits` holds None" in res.output
    assert "Traceback" not in res.output
