"""The one YAML reader: safe tags only, with bounded size (configs, catalog files, profiles,
expectations all come through here).

YAML aliases (``*a``) make a small file stand for a huge document ("billion laughs": nine
references to nine references to ... a list): the parser keeps them shared, but anything that
walks the result (validation, copying, hashing, writing the manifest) expands them. Before the
document is built, one pass over the parser's events measures it as if every alias were
expanded, and refuses it above the limits in `LIMITS` (documented in docs/input-limits.md):

* ``bytes``: the text's size;
* ``nodes``: scalars, lists and mappings, counting each alias as a copy of what it names;
* ``depth``: nesting of lists and mappings;
* an alias to a list or mapping that contains it (a cycle) is refused at any size;
* a key written twice in one mapping (the loader would keep the last one silently; the merge
  key ``<<`` and keys that override merged ones are not repeats);
* a number written with more than ``digits`` digits (Python refuses to convert one of over
  4,300 digits; the range checks of `treebench.utils.ranges` report the shorter ones by key).

The pass costs one parse (milliseconds for the largest config) and no memory beyond the
anchors' sizes.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: the limits of one YAML file (a document stream for `load_all`)
LIMITS = {"bytes": 10_000_000, "nodes": 100_000, "depth": 100, "digits": 1_000}

_NUMBER = re.compile(r"^[-+]?[0-9][0-9_]*$")



class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, reading numbers in exponent notation as YAML 1.2 does: ``1e-3``,
    ``2E5`` and ``1.0e3`` are floats (YAML 1.1 wants a dot and a signed exponent, and read them
    as text, which a learner then refused as "must be a float, got '1e-3'"). Quoted, they stay
    text."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)
_LOADER = _Loader


class YAMLLimitError(yaml.YAMLError):
    """A YAML text over one of `LIMITS`, or with a key written twice in one mapping; its message
    is one sentence."""


def load(text: str) -> Any:
    """The single document of ``text`` (``None`` for an empty one), within `LIMITS`."""
    check_limits(text)
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader


def load_all(text: str) -> list[Any]:
    """Every document of ``text``, within `LIMITS` (counted over the whole stream)."""
    check_limits(text)
    return list(yaml.load_all(text, Loader=_LOADER))  # noqa: S506 - a safe loader


def check_limits(text: str) -> None:
    """Raise `YAMLLimitError` when ``text``, with its aliases expanded, passes `LIMITS`;
    syntax errors are left to the loader (raised as `yaml.YAMLError` here too)."""
    if len(text) > LIMITS["bytes"]:
        raise YAMLLimitError(
            f"the file has {len(text):,} characters, more than the limit of {LIMITS['bytes']:,} "
            "for a YAML file; split it or shorten it."
        )
    _Measure().run(text)


class _Measure:
    """Expanded node count of an event stream: each open list/mapping sums its children's sizes
    (an alias adds the size its anchor had when it closed)."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}  # anchor -> expanded size (per document)
        self.stack: list[list[Any]] = []  # [size so far, anchor] of each open collection
        # per open collection: a mapping's keys so far (key -> line), None for a list; and
        # whether the mapping's next node is a key
        self.keys: list[dict[str, int] | None] = []
        self.want_key: list[bool] = []
        self.total = 0
        self.aliases = 0

    def run(self, text: str) -> None:
        for ev in yaml.parse(text, Loader=_LOADER):
            if isinstance(ev, yaml.NodeEvent):
                self.key(ev)
            if isinstance(ev, yaml.AliasEvent):
                self.alias(ev.anchor)
            elif isinstance(ev, yaml.ScalarEvent):
                self.number(ev)
                self.close(1, ev.anchor)
            elif isinstance(ev, yaml.CollectionStartEvent):
                self.stack.append([1, ev.anchor])
                self.keys.append({} if isinstance(ev, yaml.MappingStartEvent) else None)
                self.want_key.append(True)
                if len(self.stack) > LIMITS["depth"]:
                    raise YAMLLimitError(
                        f"lists and mappings are nested more than {LIMITS['depth']} deep "
                        f"(line {ev.start_mark.line + 1}); a config never needs that."
                    )
            elif isinstance(ev, yaml.CollectionEndEvent):
                size, anchor = self.stack.pop()
                self.keys.pop()
                self.want_key.pop()
                self.close(size, anchor)
            elif isinstance(ev, yaml.DocumentEndEvent):
                self.sizes.clear()  # anchors do not cross documents

    def key(self, ev: Any) -> None:
        """Refuse a scalar key that the open mapping already has (``ev`` starts a node)."""
        if not self.keys or self.keys[-1] is None:
            return
        if self.want_key[-1] and isinstance(ev, yaml.ScalarEvent) and ev.value != "<<":
            seen, line = self.keys[-1], ev.start_mark.line + 1
            if ev.value in seen:
                raise YAMLLimitError(
                    f"line {line}: the key `{ev.value[:80]}` is given twice in the same mapping "
                    f"(first at line {seen[ev.value]}) and YAML would keep only the last; "
                    "remove one of them."
                )
            seen[ev.value] = line
        self.want_key[-1] = not self.want_key[-1]

    def number(self, ev: Any) -> None:
        """Refuse an integer (unquoted, or tagged ``!!int``) longer than ``LIMITS["digits"]``."""
        v = ev.value
        as_int = ev.implicit[0] or (ev.tag or "").endswith(":int")
        if as_int and len(v) > LIMITS["digits"] and _NUMBER.match(v):
            raise YAMLLimitError(
                f"line {ev.start_mark.line + 1} has an integer of {len(v):,} digits, more than "
                f"the limit of {LIMITS['digits']:,}; no value of a config needs that."
            )

    def alias(self, anchor: str) -> None:
        self.aliases += 1
        if any(a == anchor for _, a in self.stack):
            raise YAMLLimitError(
                f"the alias `*{anchor}` refers to a list or mapping that contains it, which "
                "would never end; copy the values instead."
            )
        self.add(self.sizes.get(anchor, 1))  # an undefined alias: the loader says so

    def close(self, size: int, anchor: str | None) -> None:
        if anchor is not None:
            self.sizes[anchor] = size
        self.add(size)

    def add(self, n: int) -> None:
        if self.stack:
            self.stack[-1][0] += n
            size = self.stack[-1][0]
        else:
            self.total += n
            size = self.total
        if size > LIMITS["nodes"]:
            raise YAMLLimitError(
                f"with its {self.aliases:,} alias(es) (`*name`) expanded, the YAML has more than "
                f"{LIMITS['nodes']:,} values, the limit for a YAML file; write the values out or "
                "use fewer aliases."
            )
