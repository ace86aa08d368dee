"""Two dashboard rules a user relies on without reading them: the leaderboard puts the best run
first (and ties keep the order the runs were given), and a score range read from a URL is clamped to
0..100 % whatever the link says."""

import pytest

from dashboard.core.analysis import OFFICIAL, Analysis, Run, top_runs
from dashboard.core.links import FULL_RANGE, View, from_params, to_params
from scoring.model import GoldQuestion, ScoreRow

QIDS = ["q1", "q2", "q3", "q4"]


def official(name: str, accuracy: list[float], anls: list[float]) -> Run:
    rows = [ScoreRow(q, name, a, a, n) for q, a, n in zip(QIDS, accuracy, anls)]
    return Run(name, OFFICIAL, f"results/{name}.jsonl", None, rows)


# Accuracy: low 25 %, mid 50 %, high 100 %, tie 50 %;  ANLS: low 100 %, mid 50 %, high 0 %, tie 50 %
RUNS = [
    official("low", [0, 0, 0, 1], [1, 1, 1, 1]),
    official("mid", [1, 1, 0, 0], [0.5, 0.5, 0.5, 0.5]),
    official("high", [1, 1, 1, 1], [0, 0, 0, 0]),
    official("tie", [0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5]),
]


def gold_of(qids: list[str]) -> list[GoldQuestion]:
    return [GoldQuestion(q, "?", ("1",), "Int", "", "single_doc", {}) for q in qids]


@pytest.fixture
def board():
    return Analysis.build(RUNS, gold_of(QIDS), {}).leaderboard()  # the runs in the engine (in memory), as the app reads them


def test_leaderboard_is_sorted_best_accuracy_first(board):
    assert list(board["Run"]) == ["high", "mid", "tie", "low"]  # mid before tie: given first
    assert list(board["Accuracy (%)"]) == [100.0, 50.0, 50.0, 25.0]
    assert list(board["ANLS (%)"]) == [0.0, 50.0, 50.0, 100.0]
    assert list(board.index) == [0, 1, 2, 3]


def test_top_runs_ranks_by_the_chosen_metric_in_leaderboard_order(board):
    assert top_runs(board, "anls", n=2) == ["mid", "low"]  # the two best ANLS, listed as on the board
    assert top_runs(board, "accuracy", n=2) == ["high", "mid"]
    assert top_runs(board, "accuracy", n=1, keep=("low",)) == ["high", "low"]


@pytest.mark.parametrize("text,expected", [
    ("50-500", (50, 100)),       # the upper end clamped to 100
    ("500-700", (100, 100)),     # both ends
    ("250-20", (20, 100)),       # clamped, then put in order
    ("0-0", (0, 0)),
    ("7-7", (7, 7)),
])
def test_url_score_ranges_are_clamped_to_percentages(text, expected):
    view = from_params({"accuracy": text, "anls": text})
    assert view.ranges == {"accuracy": expected, "anls": expected}
    assert to_params(view)["accuracy"] == "{}-{}".format(*expected)


@pytest.mark.parametrize("text", ["0-100", "100-0", "0-900", "-50-500", "-5", "abc", "5-", "1.5-20", "", "²-5", "5-½"])
def test_full_or_unreadable_ranges_filter_nothing(text):
    view = from_params({"token_f1": text})
    assert view.ranges == {} and view == View()
    assert FULL_RANGE == (0, 100)
