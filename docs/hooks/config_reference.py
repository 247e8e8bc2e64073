"""MkDocs hook: the config reference, generated from the config schema at build time.

A page containing the marker ``<!-- treebench:config-reference -->`` gets, in its place, one
section per pydantic model of the schema (`treebench.config.Experiment` and every model its
fields reach), with a table of its keys: type (with constraints), default and description.
Types, defaults and the set of keys come from the models, so the page cannot drift from the
code. A description is, in order: the field's ``description=``, the ``#:`` comment above the
field in the source, or the entry in ``docs/hooks/config_keys.yaml``. A key described nowhere,
or a YAML entry for a key that no longer exists, is a build warning (an error with --strict).
"""

from __future__ import annotations

import ast
import inspect
import json
import logging
import re
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # document this checkout's treebench, not an installed copy
    sys.path.insert(0, str(ROOT))

MARKER = "<!-- treebench:config-reference -->"
KEYS_FILE = Path(__file__).with_name("config_keys.yaml")
log = logging.getLogger("mkdocs.hooks.config_reference")


# ----------------------------------------------------------------------------- the models
def _models_in(annotation: Any) -> list[type]:
    """The pydantic models named anywhere in a type annotation."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type] = []
    for arg in typing.get_args(annotation):
        out += _models_in(arg)
    return out


def _container_suffix(annotation: Any) -> str:
    """``[]`` when the annotation is a list (of models), else empty."""
    origin = typing.get_origin(annotation)
    if origin is list:
        return "[]"
    if origin in (typing.Union, types.UnionType):
        return next((s for a in typing.get_args(annotation) if (s := _container_suffix(a))), "")
    return ""


def walk_models(root: type) -> dict[type, list[str]]:
    """Every model reachable from ``root``, in reading order, with the key paths it is used at
    (``split``, ``datasets[].split``...); the root's path is empty."""
    found: dict[type, list[str]] = {root: [""]}
    queue = [(root, "")]
    while queue:
        model, path = queue.pop(0)
        for key, field in model.model_fields.items():
            sub = f"{path}.{key}" if path else key
            sub += _container_suffix(field.annotation)
            for m in _models_in(field.annotation):
                if m not in found:
                    found[m] = []
                    queue.append((m, sub))
                if sub not in found[m]:
                    found[m].append(sub)
    return found


# ----------------------------------------------------------------------------- descriptions
def comment_docs(model: type) -> dict[str, str]:
    """Field name → the ``#:`` comment block right above the field in the class source."""
    try:
        lines, _ = inspect.getsourcelines(model)
    except (OSError, TypeError):
        return {}
    tree = ast.parse(textwrap.dedent("".join(lines)))
    cls = tree.body[0]
    out: dict[str, str] = {}
    for node in getattr(cls, "body", []):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        block: list[str] = []
        i = node.lineno - 2  # the line above, 0-based
        while i >= 0 and lines[i].strip().startswith("#:"):
            block.insert(0, lines[i].strip()[2:].strip())
            i -= 1
        if block:
            out[node.target.id] = " ".join(block)
    return out


def load_extra(path: Path = KEYS_FILE) -> dict[str, dict[str, str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(m): {str(k): str(v) for k, v in (keys or {}).items()} for m, keys in data.items()}


def expand_constants(text: str, model: type) -> str:
    """Replace a backticked constant of the model's module (`` `MISSING_POLICIES` ``) that
    holds a tuple of words by those words, so the page shows the values, not the name."""
    module = sys.modules.get(model.__module__)

    def words(m: re.Match) -> str:
        value = getattr(module, m.group(1), None)
        if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
            return "one of " + ", ".join(f"`{v}`" for v in value)
        return m.group(0)

    return re.sub(r"`([A-Z][A-Z0-9_]+)`", words, text)


def descriptions(model: type, extra: dict[str, dict[str, str]]) -> dict[str, str | None]:
    """Field name → its description (None when nothing describes it)."""
    comments = comment_docs(model)
    own = extra.get(model.__name__, {})
    out: dict[str, str | None] = {}
    for key, field in model.model_fields.items():
        text = field.description or comments.get(key) or own.get(key)
        out[key] = None if text is None else expand_constants(strip_tracker_refs(text), model)
    return out


def strip_tracker_refs(text: str) -> str:
    """Drop references to the project's issue tracker (``(issue N)``): pages stand alone."""
    return re.sub(r"\s*\(issue \d+[^)]*\)", "", text)


# ----------------------------------------------------------------------------- rendering
def type_text(annotation: Any, anchors: dict[type, str]) -> str:
    """A readable type: ``int or null``, ``list of str``, ``"warn" or "error"``."""
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type) and annotation in anchors:
        return f"[{annotation.__name__}](#{anchors[annotation]})"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return " or ".join(f'`"{a}"`' if isinstance(a, str) else f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_text(a, anchors) for a in args)
    if origin is list:
        if not args:
            return "list"
        inner = type_text(args[0], anchors)
        return f"list of ({inner})" if " or " in inner else f"list of {inner}"
    if origin is dict:
        if args:
            return f"mapping of {type_text(args[0], anchors)} to {type_text(args[1], anchors)}"
        return "mapping"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def constraint_text(field: Any) -> str:
    """``≥ 2``, ``> 0, < 1``, ``at least 1 item`` from a field's annotated-types metadata."""
    words = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    parts = []
    for m in field.metadata:
        for attr, sym in words.items():
            if getattr(m, attr, None) is not None:
                parts.append(f"{sym} {getattr(m, attr)}")
        if getattr(m, "min_length", None):
            parts.append(f"at least {m.min_length} item{'s' if m.min_length > 1 else ''}")
        if getattr(m, "pattern", None):
            parts.append(f"matching `{m.pattern}`")
    return ", ".join(parts)


def default_text(field: Any) -> str:
    from pydantic import BaseModel

    if field.is_required():
        return "**required**"
    value = field.default_factory() if field.default_factory is not None else field.default
    if isinstance(value, BaseModel):
        return "the defaults of its keys"
    if isinstance(value, list) and value and all(isinstance(v, BaseModel) for v in value):
        value = [v.model_dump(exclude_defaults=True) or v.model_dump() for v in value]
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def model_section(model: type, paths: list[str], anchors: dict[type, str],
                  extra: dict[str, dict[str, str]]) -> tuple[str, list[str]]:
    """The Markdown section of one model and the keys that have no description."""
    title = "Top level" if paths == [""] else ", ".join(f"`{p}`" for p in paths)
    lines = [f"### {title} {{#{anchors[model]}}}", ""]
    doc = inspect.getdoc(model) if model.__doc__ else None  # not pydantic's BaseModel one
    if doc and "see the module docstring" in doc:
        doc = inspect.getdoc(sys.modules[model.__module__])
    if doc:
        lines += [strip_tracker_refs(doc), ""]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    missing = []
    for key, text in descriptions(model, extra).items():
        field = model.model_fields[key]
        kind = type_text(field.annotation, anchors)
        limits = constraint_text(field)
        if limits:
            kind += f" ({limits})"
        if text is None:
            missing.append(key)
        lines.append(f"| `{key}` | {_cell(kind)} | {_cell(default_text(field))} | "
                     f"{_cell(text or '')} |")
    return "\n".join(lines) + "\n", missing


def generate(extra: dict[str, dict[str, str]] | None = None) -> tuple[str, list[str]]:
    """The reference's Markdown and the problems found (undescribed keys, stale entries)."""
    from treebench.config import Experiment

    extra = load_extra() if extra is None else extra
    models = walk_models(Experiment)
    anchors = {m: "config-" + m.__name__.lower() for m in models}
    parts, problems = [], []
    for model, paths in models.items():
        text, missing = model_section(model, paths, anchors, extra)
        parts.append(text)
        problems += [f"config key `{model.__name__}.{k}` has no description: give the field a "
                     f"`description=` or a `#:` comment, or add it to {KEYS_FILE.name}"
                     for k in missing]
    names = {m.__name__: m for m in models}
    for mname, keys in extra.items():
        for key in keys:
            if mname not in names or key not in names[mname].model_fields:
                problems.append(f"{KEYS_FILE.name} describes `{mname}.{key}`, which is no "
                                "config key: remove the entry")
    return "\n".join(parts), problems


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    text, problems = generate()
    for p in problems:
        log.warning(p)
    return markdown.replace(MARKER, text)
