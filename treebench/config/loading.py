"""Reading a config: the YAML file, its named profiles and the command-line overrides.

Profiles and overrides set nested values by dotted key with one setter, `set_dotted_key`."""

from __future__ import annotations

import re
import os
from pathlib import Path
from typing import Any

import yaml

from treebench.utils import safe_yaml
from treebench.config.checks import validate_config
from treebench.config.schema import NAME_PATTERN, Experiment
from treebench.errors import ConfigError
from treebench.utils.text import quote, quote_list, show
from treebench.errors import did_you_mean


def load_config(
    path: str | Path, overrides: dict[str, Any] | None = None, profile: str | None = None
) -> Experiment:
    """Read, override and validate a YAML config. Raises `ConfigError` naming file and key.

    ``profile`` applies the named entry of ``profiles:`` first (see `apply_profile`); then the
    ``overrides`` (dotted keys, from the command line) win over both. Every profile of the file
    is validated, so a broken profile fails even when another one is run."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{p}: a folder, not a config file; give the path to a YAML "
                          f"experiment config.")
    if not p.is_file():
        raise ConfigError(f"{p}: no such config file; give the path to a YAML experiment config.")
    try:
        raw = safe_yaml.load(p.read_text(encoding="utf-8"))
    except safe_yaml.YAMLLimitError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{p}: invalid YAML{where}: {problem}.") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a text file; a config is UTF-8 YAML.") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: the top level must be a mapping with keys like name, datasets, algorithms.")
    raw.setdefault("name", p.stem)
    if "profile" in raw:
        raise ConfigError(f"{p}: key `profile`: set by `--profile NAME`, not in the file; "
                          "define profiles under `profiles:`.")
    _check_profiles(raw, str(p))
    if profile is not None:
        raw = apply_profile(raw, profile, str(p))
    try:
        for key, value in (overrides or {}).items():
            set_dotted_key(raw, key, value)
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    return relative_to_config(validate_config(raw, source=str(p)), p.parent)


def relative_to_config(exp: Experiment, folder: Path) -> Experiment:
    """``exp`` with the relative data paths of its file datasets (``path``, ``test_path``,
    and those of ``name: file``'s params) made to start at ``folder``, the config file's
    folder: a config and its data travel together, wherever treebench runs. Each dataset keeps
    its paths as written too (`DatasetSpec.identity_params`): cells are identified by those,
    so running the config from another folder, or naming it by another path, gives the same
    cells."""
    if folder == Path("."):
        return exp

    def moved(value: Any) -> Any:
        if not isinstance(value, str) or not value or Path(value).expanduser().is_absolute():
            return value
        return os.path.normpath(folder / value)

    specs = []
    for spec in exp.datasets:
        if not spec.is_file:
            specs.append(spec)
            continue
        update: dict[str, Any] = {k: moved(getattr(spec, k)) for k in ("path", "test_path")
                                  if getattr(spec, k) is not None}
        written = {k: getattr(spec, k) for k in ("path", "test_path")
                   if isinstance(getattr(spec, k), str)}
        if spec.name == "file" and spec.params:
            update["params"] = {k: moved(v) if k in ("path", "test_path") else v
                                for k, v in spec.params.items()}
            written.update({k: v for k, v in spec.params.items()
                            if k in ("path", "test_path") and isinstance(v, str)})
        new = spec.model_copy(update=update)
        new._written = {**spec._written, **written}
        specs.append(new)
    return exp.model_copy(update={"datasets": specs})


# ----------------------------------------------------------------------------- profiles
def apply_profile(raw: dict[str, Any], name: str, source: str = "<config>") -> dict[str, Any]:
    """``raw`` with the profile ``name`` merged over it: mappings merge key by key, any other
    value (a list, a number) replaces the config's; a dotted key (``limits.time``) sets one
    nested value. A profile's ``expect`` replaces the config's expectations. The result records
    ``profile: name``. Raise `ConfigError` for an unknown profile."""
    import copy

    profiles = raw.get("profiles") or {}
    if name not in profiles:
        known = quote_list(sorted(map(str, profiles)), max_values=10) or "none"
        raise ConfigError(f"{source}: no profile {quote(name)}{did_you_mean(name, list(profiles))}; "
                          f"the config defines: {known}.")
    out = copy.deepcopy({k: v for k, v in raw.items()})
    try:
        _merge(out, copy.deepcopy(profiles[name] or {}))
    except ConfigError as exc:
        raise ConfigError(f"{source}: profile {quote(name)}: {exc}") from None
    out["profile"] = name
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> None:
    """Merge a profile's body ``over`` into ``base``: mappings key by key, a dotted key through
    `set_dotted_key`, anything else replaces the config's value."""
    for key, value in over.items():
        if "." in key:
            set_dotted_key(base, key, value)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def set_dotted_key(raw: dict[str, Any], dotted: str, value: Any) -> None:
    """Set, in place, the value that the dotted key ``dotted`` names in ``raw`` (a config as
    read from YAML). Profiles (``limits.time: 30``) and command-line overrides use it.

    The key is split at dots. Each part is a mapping key or, where the value reached so far is
    a list, a 0-based index into that list (``algorithms.0.params.k``). A mapping key missing
    on the way is created as an empty mapping; a list is never extended. Raise `ConfigError`
    (naming the key, not the file) for an empty part, an index the list does not have, or a
    path that runs into a value that is neither a mapping nor a list."""
    node: Any = raw
    parts = dotted.split(".")
    if "" in parts:
        raise ConfigError(f"key `{dotted}`: a dotted key has a name between every two dots.")
    for i, part in enumerate(parts):
        here = ".".join(parts[:i])
        key: str | int = part
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"key `{dotted}`: `{part}` is no index of `{here}`, a list of "
                                  f"{len(node)} item(s); give a number from 0 to {len(node) - 1}.")
            key = int(part)
        elif not isinstance(node, dict):
            raise ConfigError(f"key `{dotted}`: `{here}` holds {show(node)}, not a mapping or a "
                              f"list, so it has no `{part}`; make `{here}` a mapping or remove it.")
        if i == len(parts) - 1:
            node[key] = value
        else:
            node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]


def _check_profiles(raw: dict[str, Any], source: str) -> None:
    """Each profile must be a mapping of config keys (never `name`, `profiles`, `profile`) and
    give a valid config once applied; errors name ``profiles.<name>``."""
    profiles = raw.get("profiles")
    if profiles is None:
        return
    if not isinstance(profiles, dict):
        raise ConfigError(f"{source}: key `profiles`: a mapping of profile names to partial "
                          "configs, e.g. `profiles: {ci: {limits: {time: 30}}}`.")
    for pname, body in profiles.items():
        if not isinstance(pname, str) or not re.match(NAME_PATTERN, pname):
            raise ConfigError(f"{source}: key `profiles`: the profile name {quote(pname)} is not a "
                              "safe folder name; use letters, digits, `_`, `.` and `-`, starting "
                              "with a letter or digit (e.g. `ci`).")
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: key `profiles.{pname}`: a mapping of config keys to "
                              f"override (got {type(body).__name__}).")
        for key in body:
            if str(key).split(".")[0] in ("name", "profiles", "profile"):
                raise ConfigError(f"{source}: key `profiles.{pname}.{key}`: a profile cannot "
                                  "change the experiment's name or define profiles.")
        validate_config(apply_profile(raw, pname, source), source=f"{source}: profile `{pname}`")
