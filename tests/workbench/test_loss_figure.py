"""The loss figure of the training page is drawn from committed files (`seq2seq_report.py --figure-only`).

Two of its five runs (gru-mixed, gru-scheduled) have no committed checkpoint; their histories come from their
committed training logs. These tests check that a log's epoch lines are the history a checkpoint holds (to the
log's four decimals), and that what the figure would draw agrees with the committed metrics.json.
"""

import importlib.util
import json

import pytest
from site_support import ROOT

from seq2seq_attention import load_checkpoint

spec = importlib.util.spec_from_file_location("seq2seq_report", ROOT / "scripts" / "seq2seq_report.py")
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)
METRICS = json.loads((ROOT / "results" / "seq2seq" / "metrics.json").read_text(encoding="utf-8"))
ROUNDING = 5e-5
"""A log writes losses with four decimals."""


@pytest.mark.parametrize("name", ["gru", "bahdanau"])
def test_a_training_log_holds_the_history_its_checkpoint_holds(name: str):
    run = METRICS["runs"][name]
    saved = load_checkpoint(ROOT / run["checkpoint"]).training["history"]
    logged = report.history_from_log((ROOT / run["log"]).read_text(encoding="utf-8"))
    assert [h["epoch"] for h in logged] == [h["epoch"] for h in saved]
    for a, b in zip(logged, saved, strict=True):
        assert abs(a["loss"] - b["loss"]) <= ROUNDING and abs(a["test_loss"] - b["test_loss"]) <= ROUNDING


def test_the_figure_draws_the_main_split_runs_as_metrics_json_reports_them():
    curves = report.committed_curves(METRICS)
    assert [name for name, _, _ in curves] == ["gru", "gru-mixed", "gru-scheduled", "bahdanau", "bahdanau-bi"]
    for name, hidden_size, history in curves:
        run = METRICS["runs"][name]
        assert hidden_size == run["config"]["hidden_size"] and len(history) == run["epochs"]
        assert abs(history[-1]["loss"] - run["final_loss"]) <= ROUNDING
        best = min(history, key=lambda h: h["test_loss"])
        assert best["epoch"] == run["best_test_epoch"]
        assert abs(best["test_loss"] - run["best_test_loss"]) <= ROUNDING


def test_the_log_reader_reads_a_missing_held_out_loss_and_refuses_a_repeated_epoch():
    line = "| epoch: {:3d} | time:   1.9 sec | loss:   3.5505 | held-out loss: {}"
    log = "\n".join(["5318 pairs", line.format(1, "  2.9071"), line.format(2, "       -"), "held-out BLEU 20.78"])
    assert report.history_from_log(log) == [
        {"epoch": 1, "seconds": 1.9, "loss": 3.5505, "test_loss": 2.9071},
        {"epoch": 2, "seconds": 1.9, "loss": 3.5505, "test_loss": None},
    ]
    with pytest.raises(ValueError, match="epochs run 1, 2"):
        report.history_from_log("\n".join([line.format(1, "2.0"), line.format(1, "2.0")]))


VISIBLE_FROM_EPOCH = 15
"""From here on the two Bahdanau runs' losses agree to a few thousandths: one line lies on the other."""
MIN_VISIBLE_PX = 40


def test_every_line_of_the_figure_shows_where_the_curves_coincide():
    """Each run's training and held-out lines show their own colour after epoch 15 (pixels of that colour that go when
    the line is hidden): no line lies wholly under another's, as bahdanau's training line lay under bahdanau-bi's."""
    import numpy as np
    from matplotlib.colors import to_rgb

    fig = report.loss_figure(report.committed_curves(METRICS))
    try:
        (ax,) = fig.axes

        def pixels() -> np.ndarray:
            fig.canvas.draw()
            return np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)

        everything = pixels()
        height = everything.shape[0]
        box = ax.get_window_extent()
        left = int(ax.transData.transform((VISIBLE_FROM_EPOCH, 0))[0])
        rows = slice(int(height - box.y1), int(height - box.y0))  # the image's rows run top down
        hidden = {}
        for line in ax.get_lines():
            line.set_visible(False)
            colour = np.array(to_rgb(line.get_color())) * 255
            # pixels that the line paints in its own colour: they change when it is hidden, and they show its colour
            own = (np.abs(pixels() - everything).sum(axis=2) > 30) & (np.abs(everything - colour).sum(axis=2) < 60)
            changed = own[rows, left : int(box.x1)]
            line.set_visible(True)
            hidden[line.get_label()] = int(changed.sum())
    finally:
        report.plt.close(fig)
    assert len(hidden) == 10, hidden
    assert min(hidden.values()) >= MIN_VISIBLE_PX, hidden
