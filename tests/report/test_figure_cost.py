"""What a report's figure costs, and that the cheaper way draws what the dearer one did: a
figure laid out and saved on one Agg renderer (each text measured once) gives the same pixels
as one laid out without a canvas, and log axes label their ticks in plain text with Unicode
superscripts (no math parser), the same ticks matplotlib's own formatter labels."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatterSciNotation

from treebench.report.figures import RC, agg_figure, agg_renderer, lay_out_once
from treebench.report.ticks import UnicodeLogFormatter, math_to_unicode, unicode_log_ticks


def _plot(fig):
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(1, 6)
    ax.errorbar(x, 0.7 + 0.05 * np.sin(x), yerr=0.02, marker="o", capsize=2, label="a setting")
    ax.errorbar(x, 0.6 + 0.03 * x, yerr=0.01, marker="s", linestyle="--", label="another")
    ax.set_title("wine: test accuracy vs max_depth", y=1.0)
    ax.set_xlabel("max_depth")
    ax.set_ylabel("test accuracy")
    ax.legend(loc="best", fontsize="small")
    return ax


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    return buf.getvalue()


def test_a_figure_drawn_by_agg_from_the_start_has_the_same_pixels():
    with matplotlib.rc_context(RC):
        plain = Figure(figsize=(7.6, 4.4), dpi=110, layout="constrained")
        _plot(plain)
        ours = agg_figure((7.6, 4.4))
        _plot(ours)
        assert _png(ours) == _png(plain)


def test_the_layout_and_the_png_share_one_renderer():
    with matplotlib.rc_context(RC):
        fig = agg_figure((7.6, 4.4))
        _plot(fig)
        renderer = agg_renderer(fig)
        lay_out_once(fig)
        box = fig.axes[0].get_position().bounds
        _png(fig)
        # the canvas kept the renderer the layout measured texts on: the text-size cache,
        # keyed on the renderer, answers the draw
        assert fig.canvas.renderer is renderer
        assert fig.axes[0].get_position().bounds == box  # laid out once, kept


def test_a_figure_laid_out_once_is_drawn_once_when_saved_with_the_same_pixels(monkeypatch):
    """A placeholder layout engine (``"none"``) would make `savefig` draw the figure twice
    (a dry run, then the render); `lay_out_once` removes the engine, so saving draws once,
    and the file is the one the constrained layout saves itself."""
    with matplotlib.rc_context(RC):
        engine_png = _png(_plot(agg_figure((7.6, 4.4))).figure)
        fig = agg_figure((7.6, 4.4))
        _plot(fig)
        lay_out_once(fig)
        assert fig.get_layout_engine() is None
        draws = []
        real = Figure.draw
        monkeypatch.setattr(Figure, "draw", lambda self, r: (draws.append(1), real(self, r)))
        ours = _png(fig)
        assert len(draws) == 1
        assert ours == engine_png


@pytest.mark.parametrize(("math", "plain"), [
    (r"$\mathdefault{10^{-3}}$", "10⁻³"),
    (r"$\mathdefault{10^{12}}$", "10¹²"),
    (r"$\mathdefault{2\times10^{1}}$", "2×10¹"),
    (r"$\mathdefault{5\times10^{-2}}$", "5×10⁻²"),
    (r"$\mathdefault{-10^{2}}$", "\u221210²"),
    (r"$\mathdefault{0}$", "0"),
    (r"$\mathdefault{1.5}$", "1.5"),
    ("", ""),
    ("0.25", "0.25"),
])
def test_math_labels_become_plain_text(math, plain):
    assert math_to_unicode(math) == plain


def test_a_label_of_an_unknown_form_is_left_to_the_math_parser():
    for label in (r"$\mathdefault{10^{0.50}}$", r"$\frac{1}{2}$", r"$\mathdefault{\alpha}$"):
        assert math_to_unicode(label) == label


@pytest.mark.parametrize(("lo", "hi", "scale"), [
    (3, 130, "log"), (0.0008, 0.002, "log"), (2e-5, 40, "log"), (1, 5, "log"),
    (0.5, 300, "symlog"),
])
def test_log_axes_label_the_same_ticks_in_plain_text(lo, hi, scale):
    """The plain-text formatter labels exactly the ticks matplotlib's labels, with the same
    values, and no label needs the math parser."""
    labels = {}
    for plain in (False, True):
        with matplotlib.rc_context(RC):
            fig = agg_figure((4, 3))
            ax = fig.add_subplot(1, 1, 1)
            ax.plot([0, 1], [lo, hi])
            ax.set_yscale(scale)
            if plain:
                unicode_log_ticks(fig)
                assert type(ax.yaxis.get_major_formatter()) is UnicodeLogFormatter
            else:
                assert type(ax.yaxis.get_major_formatter()) is LogFormatterSciNotation
            _png(fig)
            labels[plain] = [t.get_text() for t in
                             ax.get_yticklabels() + ax.get_yticklabels(minor=True)]
    assert any(labels[True])
    assert [math_to_unicode(t) for t in labels[False]] == labels[True]
    assert not any("$" in t for t in labels[True])


def test_other_formatters_are_left_as_they_are():
    from matplotlib.ticker import FuncFormatter

    with matplotlib.rc_context(RC):
        fig = agg_figure((4, 3))
        ax = fig.add_subplot(1, 1, 1)
        ax.set_yscale("log")
        own = FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(own)
        unicode_log_ticks(fig)
        assert ax.yaxis.get_major_formatter() is own
        assert type(ax.xaxis.get_major_formatter()) is not UnicodeLogFormatter
        assert type(ax.yaxis.get_minor_formatter()) is UnicodeLogFormatter
