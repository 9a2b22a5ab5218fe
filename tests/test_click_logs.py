"""Click logs: the column-wise ClickLogs, the simulator (position-based clicks,
randomised swaps) and the JSON Lines format, on good and on hostile input."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from structsvm.corpora.clicks import (ClickLog, ClickLogs, click_preferences,
                                      click_probabilities, examination_probabilities,
                                      read_click_log, simulate_click_logs, simulate_clicks,
                                      write_click_log)


def sessions():
    return [ClickLog(0, np.array([2, 0, 1]), np.array([False, True, False]),
                     np.array([1.0, 0.5, 0.25])),
            ClickLog(1, np.array([1, 0]), np.array([True, True]), np.array([1.0, 0.5])),
            ClickLog(0, np.array([0]), np.array([False]), np.array([1.0]))]


# ----------------------------------------------------------------------- ClickLogs
def test_click_logs_hold_the_sessions_column_wise():
    logs = ClickLogs.from_sessions(sessions())
    assert len(logs) == 3 and logs.n_queries == 2
    assert logs.offsets.tolist() == [0, 3, 5, 6]
    assert logs.positions.tolist() == [1, 2, 3, 1, 2, 1]
    assert logs.session_of.tolist() == [0, 0, 0, 1, 1, 2]
    assert logs.entry_query.tolist() == [0, 0, 0, 1, 1, 0]
    for got, want in zip(logs, sessions()):
        assert got.query == want.query
        assert got.shown.tolist() == want.shown.tolist()
        assert got.clicks.tolist() == want.clicks.tolist()
        assert got.propensities.tolist() == want.propensities.tolist()
    assert logs[-1].shown.tolist() == [0]
    sub = logs.select([2, 0])
    assert [s.shown.tolist() for s in sub] == [[0], [2, 0, 1]]
    assert sub.propensities.tolist() == [1.0, 1.0, 0.5, 0.25]
    both = ClickLogs.concatenate([logs, sub])
    assert len(both) == 5 and both.offsets[-1] == 10
    assert [s.shown.tolist() for s in both][3:] == [[0], [2, 0, 1]]
    # a part without propensities: the concatenation has none
    plain = ClickLogs.from_sessions([ClickLog(0, [1], [True])])
    assert ClickLogs.concatenate([logs, plain]).propensities is None
    # functions that take a list of sessions take a ClickLogs alike
    assert [p.tolist() for p in click_preferences(logs, 2)] == \
        [p.tolist() for p in click_preferences(sessions(), 2)]


@pytest.mark.parametrize("args, match", [
    (([0], [0, 2], [1, 1], [False, True]), "session 0: document 1 is shown twice"),
    (([0], [0, 3], [1, 2], [False, True]), "offsets must increase from 0"),
    (([0], [0, 2], [1, 2], [False]), "clicks has 1 entries, shown has 2"),
    (([-1], [0, 1], [1], [True]), "session 0: negative query"),
    (([0], [0, 1], [-3], [True]), "session 0: negative document"),
    (([0], [0, 2], [1, 2], [0, 2]), "booleans"),
    (([0.5], [0, 1], [1], [True]), "query must hold integers"),
    ((["a"], [0, 1], [1], [True]), "query must hold integers"),
    (([0, 0], [0, 1, 2], [1, 2], [True, True], [1.0, 0.0]), "session 1: propensities "
                                                              "must be in \\(0, 1\\]"),
])
def test_click_logs_refuse_inconsistent_columns(args, match):
    with pytest.raises(ValueError, match=match):
        ClickLogs(*args)


def test_from_sessions_errors():
    with pytest.raises(ValueError, match="session 1: propensities are given for some"):
        ClickLogs.from_sessions([ClickLog(0, [0], [True], [1.0]), ClickLog(0, [0], [True])])
    with pytest.raises(ValueError, match="session 0: shown has 2 documents but clicks"):
        ClickLogs.from_sessions([ClickLog(0, [0, 1], [True])])
    with pytest.raises(TypeError, match="session 0: expected a ClickLog"):
        ClickLogs.from_sessions([(0, [0], [True])])


# ----------------------------------------------------------------------- simulator
def test_position_model_click_rates_are_examination_times_relevance():
    """P(click at k) = (1/k)^η · p(rel), position by position (4 standard errors)."""
    rel = [np.array([2, 0, 1, 2, 0, 1, 2, 0])]
    S, eta = 40000, 1.5
    logs = simulate_click_logs([np.arange(8)], rel, n_sessions=S, eta=eta, noise=0.1,
                               random_state=0)
    rate = logs.clicks.reshape(S, 8).mean(axis=0)
    want = examination_probabilities(8, eta) * click_probabilities(rel, noise=0.1)[0]
    assert np.all(np.abs(rate - want) <= 4 * np.sqrt(want * (1 - want) / S))
    assert np.allclose(logs.propensities.reshape(S, 8), examination_probabilities(8, eta))


def test_swaps_exchange_the_top_with_a_uniform_position():
    order = np.array([4, 2, 0, 1, 3, 5])
    S = 6000
    logs = simulate_click_logs([order], [np.zeros(6)], n_sessions=S, swap=4,
                               random_state=1)
    lists = logs.shown.reshape(S, 6)
    k = np.array([int(np.flatnonzero(row == order[0])[0]) for row in lists])
    assert set(k) == {0, 1, 2, 3}                      # positions 1..4 only
    counts = np.bincount(k, minlength=4)
    assert np.all(np.abs(counts - S / 4) <= 4 * np.sqrt(S * 0.25 * 0.75))
    for row, j in zip(lists, k):                       # exactly positions 1 and k swapped
        want = order.copy()
        want[0], want[j] = order[j], order[0]
        assert row.tolist() == want.tolist()


def test_cascade_clicks_stop_after_a_satisfying_click():
    rel = [np.array([0, 2, 0, 2, 2])]
    logs = simulate_click_logs([np.arange(5)], rel, n_sessions=300, model="cascade",
                               noise=0.0, stop=1.0, random_state=2)
    assert logs.propensities is None
    c = logs.clicks.reshape(300, 5)
    assert np.all(c.sum(axis=1) == 1) and np.all(c[:, 1])   # the first relevant one
    # stop = 0: every relevant result is clicked
    logs = simulate_click_logs([np.arange(5)], rel, n_sessions=50, model="cascade",
                               noise=0.0, stop=0.0, random_state=2)
    assert np.all(logs.clicks.reshape(50, 5) == (rel[0] > 0))


def test_simulate_clicks_returns_sessions_of_the_top_k():
    logs = simulate_clicks([np.arange(15)], [np.ones(15)], n_sessions=3, random_state=0)
    assert len(logs) == 3 and all(isinstance(s, ClickLog) and s.shown.size == 10
                                  for s in logs)
    per_query = simulate_click_logs([np.arange(3), np.arange(2)], [[1, 0, 0], [0, 1]],
                                    n_sessions=[2, 5], random_state=0)
    assert per_query.query.tolist() == [0, 0, 1, 1, 1, 1, 1]


@pytest.mark.parametrize("kwargs, match", [
    (dict(eta=-1.0), "eta must be"),
    (dict(swap=0), "swap must be"),
    (dict(top_k=0), "top_k must be"),
    (dict(model="dbn"), "model must be"),
    (dict(noise=0.5), "noise must be"),
    (dict(n_sessions=-1), "n_sessions must be"),
])
def test_simulator_parameter_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_click_logs([[0, 1]], [[1, 0]], **kwargs)


# ----------------------------------------------------------------------- files
def test_write_then_read_gives_the_same_log(tmp_path):
    logs = simulate_click_logs([np.arange(4), np.array([2, 0, 1])], [[0, 2, 1, 0], [1, 0, 2]],
                               n_sessions=5, swap=3, random_state=3)
    path = tmp_path / "clicks.jsonl"
    qids = ["q10", "q11"]
    dids = [["a", "b", "c", "d"], ["x", "y", "z"]]
    write_click_log(path, logs, query_ids=qids, document_ids=dids)
    first = json.loads(path.read_text().splitlines()[0])
    assert first["query"] == "q10" and set(first) == {"query", "shown", "clicks",
                                                      "propensities"}
    back = read_click_log(path, query_ids=qids, document_ids=dids)
    for name in ("query", "offsets", "shown", "clicks", "propensities"):
        assert np.array_equal(getattr(back, name), getattr(logs, name)), name
    assert back.query_ids == qids and back.document_ids == dids and back.X is None
    # without the labels: indices by first appearance, labels kept
    free = read_click_log(path)
    assert free.query_ids == ["q10", "q11"]
    for s_free, s_log in zip(free, logs):
        labels = [free.document_ids[s_free.query][d] for d in s_free.shown]
        assert labels == [dids[s_log.query][d] for d in s_log.shown]
    # integer labels written by default read back through index labels
    write_click_log(tmp_path / "ints.jsonl", logs)
    ints = read_click_log(tmp_path / "ints.jsonl", query_ids=[0, 1],
                          document_ids=[range(4), range(3)])
    assert np.array_equal(ints.shown, logs.shown)


def test_features_on_the_lines_become_X(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text(
        '{"query": 7, "shown": ["u", "v"], "clicks": [2], "features": [[1, 0], [0, 2.5]]}\n'
        '\n'
        '{"query": 7, "shown": ["v", "w"], "clicks": [], "features": [[0, 2.5], [3, 3]]}\n')
    logs = read_click_log(path)
    assert logs.document_ids == [["u", "v", "w"]]
    assert logs.X[0].tolist() == [[1, 0], [0, 2.5], [3, 3]]
    assert logs.clicks.tolist() == [False, True, False, False]


@pytest.mark.parametrize("text, match", [
    ('{"query": 1, "shown": [1, 2], "clicks": [3]}', "line 1: clicked position 3 is "
                                                     "outside 1..2"),
    ('{"query": 1, "shown": [1, 1], "clicks": []}', "line 1: a document is shown twice"),
    ('{"query": 1, "shown": [1], "clicks": [1]\n', "line 1: not a JSON object"),
    ('[1, 2]', "line 1: expected a JSON object, got list"),
    ('{"query": 1, "shown": [1]}', "line 1: no 'clicks' field"),
    ('{"query": 1, "shown": [1], "clicks": [], "dwell": 3}', "unknown field 'dwell'"),
    ('{"query": [1], "shown": [1], "clicks": []}', "query label must be a string or"),
    ('{"query": 1, "shown": [true], "clicks": []}', "document label must be a string"),
    ('{"query": 1, "shown": [1], "clicks": [1.5]}', "'clicks' must be a list of 1-based"),
    ('{"query": 1, "shown": [1], "clicks": [], "propensities": [NaN]}',
     "NaN is not a finite number"),
    ('{"query": 1, "shown": [1], "clicks": [], "propensities": [1.5]}',
     "propensities must be in \\(0, 1\\]"),
    ('{"query": 1, "shown": [1, 2], "clicks": [], "propensities": [1]}',
     "1 propensities for 2 displayed"),
    ('{"query": 1, "shown": [1], "clicks": [], "propensities": [1]}\n'
     '{"query": 1, "shown": [1], "clicks": []}', "line 2: propensities are given on some"),
    ('{"query": 1, "shown": [1], "clicks": [], "features": [[1, 2]]}\n'
     '{"query": 1, "shown": [2], "clicks": [], "features": [[1]]}',
     "line 2: a row of 1 features, earlier rows have 2"),
    ('{"query": 1, "shown": [1], "clicks": [], "features": [[1, 2]]}\n'
     '{"query": 1, "shown": [1], "clicks": [], "features": [[1, 3]]}',
     "line 2: document '1' of query '1' has other features"),
    ('{"query": 1, "shown": [1], "clicks": [], "features": [[1, 2]]}\n'
     '{"query": 1, "shown": [2], "clicks": []}', "document '2' of query '1' has no "
                                                  "features"),
    ('{"query": 1, "shown": [1], "clicks": [], "features": [["a"]]}',
     "a row of features must be a list of finite numbers"),
    ("[" * 100000 + "]" * 100000, "line 1: not a JSON object"),
])
def test_malformed_logs_name_the_file_and_line(tmp_path, text, match):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"bad.jsonl.*{match}"):
        read_click_log(path)


def test_labels_outside_the_given_ones(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text('{"query": "q1", "shown": ["a", "z"], "clicks": [1]}\n')
    with pytest.raises(ValueError, match="line 1: query 'q1' is not among query_ids"):
        read_click_log(path, query_ids=["q0"])
    with pytest.raises(ValueError, match="line 1: document 'z' is not among the documents "
                                         "of query 'q1'"):
        read_click_log(path, query_ids=["q1"], document_ids=[["a", "b"]])
    with pytest.raises(ValueError, match="document_ids needs query_ids"):
        read_click_log(path, document_ids=[["a"]])
    with pytest.raises(ValueError, match="not a regular file"):
        read_click_log(tmp_path)


# ----------------------------------------------------------------------- hostile bytes
_VALUES = st.one_of(st.integers(-3, 5), st.sampled_from([0.5, 1.5, -0.0, 1e308, True,
                                                          None, "a", "", [], {}]),
                    st.text(max_size=3))
_FIELD = st.sampled_from(["query", "shown", "clicks", "propensities", "features", "x"])
_LINE = st.dictionaries(_FIELD, st.one_of(_VALUES, st.lists(_VALUES, max_size=4),
                                          st.lists(st.lists(_VALUES, max_size=3),
                                                   max_size=3)), max_size=5)


def _only_value_errors(path):
    try:
        read_click_log(path)
    except ValueError as exc:
        assert str(path) in str(exc)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, min_size=1, max_size=4))
def test_near_valid_lines_give_only_value_errors(tmp_path, lines):
    path = tmp_path / "near.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    _only_value_errors(path)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_random_bytes_give_only_value_errors(tmp_path, data):
    path = tmp_path / "random.jsonl"
    path.write_bytes(data)
    _only_value_errors(path)
