"""Loaders of the taxonomy and ranking corpora, and the svm_rank file format."""
import numpy as np
import pytest
import scipy.sparse as sp

from structsvm.corpora import (load_mini_newsgroups, load_mq2008, load_qc,
                               load_svm_rank_example3, read_svm_rank, write_svm_rank)
from structsvm.structures.taxonomy.features import build_tree


def test_svm_rank_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = [np.round(rng.random((n, 4)) * (rng.random((n, 4)) > 0.5), 3) for n in (3, 1, 5)]
    Y = [rng.integers(0, 3, len(x)) for x in X]
    f = tmp_path / "q.dat"
    write_svm_rank(f, X, Y, qids=[7, 3, 9], comments=[[f"d{i}" for i in range(len(x))]
                                                        for x in X])
    data = read_svm_rank(f, n_features=4, dense=True)
    assert data.qids.tolist() == [7, 3, 9]
    for a, b, ya, yb in zip(X, data.X, Y, data.Y):
        assert np.allclose(a, b) and np.array_equal(ya, yb)
    sparse = read_svm_rank(f, n_features=4)
    assert all(sp.issparse(x) for x in sparse.X)


def test_svm_rank_missing_qid_names_the_line(tmp_path):
    f = tmp_path / "bad.dat"
    f.write_text("# header\n1 qid:1 1:0.5\n0 2:1\n")
    with pytest.raises(ValueError, match="line 3: no 'qid:'"):
        read_svm_rank(f)


def test_svm_rank_example3(need_data):
    train, test = need_data(load_svm_rank_example3)
    # queries and grades: the data folder's README.md §7
    assert [len(y) for y in train.Y] == [4, 4, 4] and train.qids.tolist() == [1, 2, 3]
    assert test.qids.tolist() == [4] and test.X[0].shape == (4, 5)
    assert train.Y[0].tolist() == [3, 2, 1, 1]


def test_mq2008_fold1_matches_the_published_counts(need_data):
    fold = need_data(load_mq2008, 1)
    # per-subset documents and queries (S1-S3 train fold 1, S5 its test):
    # the data folder's README.md §6 (verified counts table)
    assert [len(p.X) for p in fold] == [471, 157, 156]
    assert sum(len(y) for y in fold.train.Y) == 2933 + 3635 + 3062
    assert sum(len(y) for y in fold.test.Y) == 2874
    assert fold.train.X[0].shape[1] == 46
    assert set(np.concatenate(fold.train.Y).tolist()) == {0.0, 1.0, 2.0}
    fold2 = need_data(load_mq2008, 2)
    assert fold2.test.qids.tolist() == fold.train.qids[:157].tolist()  # test = S1
    with pytest.raises(ValueError, match="fold must be 1..5"):
        load_mq2008(6)


def test_qc_is_a_two_level_taxonomy(need_data):
    qc = need_data(load_qc)
    # 5,452 / 500 questions, 6 coarse and 50 fine labels: the data folder's README.md §3
    assert len(qc.train_questions) == 5452 and len(qc.test_questions) == 500
    assert len(set(qc.train_labels)) == 50
    assert {c for c, _ in qc.train_labels} == {"ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"}
    tree = build_tree(sorted(set(qc.train_labels)))
    assert tree.height == 2 and len(tree.leaves) == 50


def test_mini_newsgroups_group_names_form_a_tree(need_data):
    ng = need_data(load_mini_newsgroups)
    # 20 groups x 100 posts: the data folder's README.md §4
    assert len(ng.texts) == 2000 and len(set(ng.labels)) == 20
    assert "Newsgroups:" not in ng.texts[0]
    tree = build_tree(sorted(set(ng.labels)), sep=".")
    assert tree.height == 5 and len(tree.leaves) == 20
