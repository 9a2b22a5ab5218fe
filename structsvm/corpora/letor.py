"""LETOR 4.0 MQ2008 (five folds from subsets S1..S5) and svm_rank's example3."""
from __future__ import annotations

from typing import NamedTuple

from ._paths import find_data
from .svmlight import RankingData, read_svm_rank

__all__ = ["LetorFold", "load_mq2008", "load_svm_rank_example3"]

_MQ_HINT = ("MQ2008 comes with LETOR 4.0 (Microsoft Research); the folder letor4_mq2008 "
            "holds S1.txt..S5.txt.")


class LetorFold(NamedTuple):
    """Train / validation / test queries of one fold."""

    train: RankingData
    vali: RankingData
    test: RankingData


def _concat(parts):
    X, Y, q = [], [], []
    for p in parts:
        X += p.X
        Y += p.Y
        q += list(p.qids)
    import numpy as np

    return RankingData(X, Y, np.asarray(q))


def load_mq2008(fold=1, path=None, *, dense=True):
    """Load fold ``fold`` of LETOR 4.0 MQ2008 (46 features, grades 0/1/2).

    Fold k trains on S_k, S_{k+1}, S_{k+2}, validates on S_{k+3} and tests on
    S_{k+4} (indices mod 5), as LETOR defines its Fold1..Fold5.

    Parameters
    ----------
    fold : int in 1..5, default=1
    path : str, optional
        Folder with S1.txt .. S5.txt (default: ``$STRUCTSVM_DATA/letor4_mq2008``).
    dense : bool, default=True

    Returns
    -------
    LetorFold

    References
    ----------
    T. Qin, T.-Y. Liu. Introducing LETOR 4.0 datasets. arXiv:1306.2597, 2013.
    """
    if fold not in (1, 2, 3, 4, 5):
        raise ValueError(f"fold must be 1..5, got {fold!r}")
    root = find_data("letor4_mq2008", path=path,
                     must_contain=[f"S{k}.txt" for k in range(1, 6)], hint=_MQ_HINT)
    subsets = {k: read_svm_rank(root / f"S{k}.txt", n_features=46, dense=dense)
               for k in range(1, 6)}
    ks = [(fold - 1 + j) % 5 + 1 for j in range(5)]
    return LetorFold(_concat([subsets[k] for k in ks[:3]]), subsets[ks[3]],
                     subsets[ks[4]])


def load_svm_rank_example3(path=None, *, dense=True):
    """Joachims' svm_rank example3: (train, test), 3 + 1 queries, 5 features."""
    root = find_data("svm_rank_example3", path=path, must_contain=["train.dat", "test.dat"],
                     hint="example3 ships with svm_rank (Joachims).")
    return (read_svm_rank(root / "train.dat", n_features=5, dense=dense),
            read_svm_rank(root / "test.dat", n_features=5, dense=dense))
