"""Tick labels of log axes without matplotlib's math parser.

A log (or symlog) axis labels its ticks ``10⁻³``, ``2×10¹``: matplotlib writes them as math text
(``$\\mathdefault{10^{-3}}$``), which its parser turns into glyphs. Building that parser costs
about 0.3 s in each drawing process and every new label 15-25 ms more, a tenth of a report's
figures' time. The same labels written with Unicode superscripts (``10⁻³``, ``2×10¹``) are plain
text, drawn by the font directly; `unicode_log_ticks` switches a figure's log axes to them.
"""

from __future__ import annotations

import re
from typing import Any

from matplotlib.ticker import LogFormatterSciNotation

SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
MATH_LABEL = re.compile(r"\$\\mathdefault\{(.*)\}\$")
POWER = re.compile(r"\^\{(-?\d+)\}")
MINUS = "\u2212"  # what matplotlib draws for a minus sign (`axes.unicode_minus`)


def math_to_unicode(label: str) -> str:
    """``label`` as matplotlib's log formatter writes it (``$\\mathdefault{2\\times10^{-3}}$``)
    in plain text with Unicode superscripts (``2×10⁻³``); a label of any other form, unchanged."""
    m = MATH_LABEL.fullmatch(label)
    if m is None:
        return label
    body = m.group(1).replace(r"\times", "×")
    body = POWER.sub(lambda p: p.group(1).translate(SUPERSCRIPT), body)
    if any(c in body for c in "\\{}^$"):
        return label  # a form this function does not know: left to the math parser
    return body.replace("-", MINUS)


class UnicodeLogFormatter(LogFormatterSciNotation):
    """matplotlib's log-axis formatter (the same ticks labelled, the same values) whose labels
    are plain text (`math_to_unicode`)."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return math_to_unicode(super().__call__(x, pos))


def unicode_log_ticks(fig: Any) -> None:
    """Give every log and symlog axis of ``fig`` that uses matplotlib's own formatter the
    plain-text one. Call it when the axes' scales are set and before the figure is laid out
    (the labels' sizes are part of the layout)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for ticker in (axis.major, axis.minor):
                if type(ticker.formatter) is LogFormatterSciNotation:
                    # the same formatter, state and all (base, thresholds, the labels it picked
                    # for the current view), with plain-text labels: the subclass adds no state
                    ticker.formatter.__class__ = UnicodeLogFormatter
