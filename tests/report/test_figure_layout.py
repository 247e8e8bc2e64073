"""A figure's legend and note fit inside it: long labels (a reference setting with several
parameters) and a long note (failed cells) are wrapped, so the constrained layout never gives
up ("axes sizes collapsed to zero") and no text runs past the figure's right edge."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from treebench.report.figures import LABEL_WIDTH, NOTE_WIDTH, finish_figure, new_figure, save, wrap

LONG = ("bars: 95 % CI of the mean over folds (Student t), clipped to the metric's range; "
        "hollow marker: some cells of the setting failed (its mean is over fewer folds)")


def test_wrap_breaks_at_spaces_within_the_width():
    text = wrap(LONG, 40)
    assert text.replace("\n", " ") == LONG
    assert all(len(line) <= 40 for line in text.split("\n"))
    assert wrap("one-very-long-word-without-spaces", 5) == "one-very-long-word-without-spaces"
    assert wrap("", 10) == ""


@pytest.mark.parametrize("n_refs", [1, 4, 8])
def test_long_labels_and_note_keep_the_layout(tmp_path, n_refs):
    """With one long label among two entries too: a legend inside the axes (for three entries
    or fewer) was never wrapped, and covered the data; a long label puts it outside."""
    fig, ax = new_figure()
    x = np.array([0.01, 0.1, 1.0, 10.0, 100.0])
    for i in range(n_refs):
        ax.axhline(0.7 + 0.02 * i, label=f"C{i} (d_term=authors, min_objects=2, theta=0.005, "
                                          f"lam={i}) [reference]")
    ax.plot(x, 0.7 + 0.01 * x, marker="o", label="EC4.5")
    ax.set_xscale("log")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "constrained_layout not applied"
        finish_figure(fig, ax, "tic-tac-toe+rc: test accuracy vs lam", "test accuracy", "lam",
                      LONG + " " + LONG, n_refs + 1)
        save(fig, tmp_path / "f", "t", ("png",))
    renderer = fig._get_renderer()  # the renderer of the last save (Agg)
    width = fig.bbox.width
    texts = [t for t in fig.legends[0].get_texts()] + list(ax.texts)
    assert texts
    for t in texts:
        box = t.get_window_extent(renderer)
        assert box.x1 <= width + 1, (t.get_text(), box.x1, width)
    assert all(len(line) <= LABEL_WIDTH for t in fig.legends[0].get_texts()
               for line in t.get_text().split("\n"))
    note = ax.texts[0].get_text()
    assert note.count("\n") >= 1 and all(len(line) <= NOTE_WIDTH for line in note.split("\n"))
    assert ax.bbox.width > 0.4 * width  # the axes keep room for the data
