"""Corpus loaders and file formats.

Loaders never download: they look in an explicit path, then ``$STRUCTSVM_DATA``,
then the corpora folder (``$STRUCTSVM_CORPORA`` or a checkout's ``corpora/``), then
NLTK's search path (``$NLTK_DATA``); see :func:`structsvm.corpora.find_data`.
``structsvm data list|verify|fetch`` (:mod:`structsvm.corpora.manifest`) shows what is
installed, checks it against ``corpora/manifest.json`` and copies missing corpora in.
"""
from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from ._paths import DataNotFoundError, corpora_dir, find_data, nltk_search_path, require_data
    from .spam import SpamData, load_spam
    from .conll import CONLL2000_CHUNK_TYPES, load_conll2000, read_conll
    from .conll2002 import (CONLL2002_ENTITY_TYPES, Conll2002Data, load_conll2002,
                            read_conll2002)
    from .svm_hmm import read_svm_hmm, write_svm_hmm
    from .synthetic import make_hmm_corpus, make_two_spirals
    from .treebank import (load_treebank, load_treebank_trees, treebank_parsed_sents,
                           treebank_tagged_sents)
    from .dependency_treebank import (dependency_treebank_sents, load_dependency_treebank,
                                      read_dependency_file)
    from .letor import LetorFold, load_mq2008, load_svm_rank_example3
    from .newsgroups import NewsgroupsData, load_mini_newsgroups
    from .qc import QCData, load_qc, read_qc
    from .svmlight import RankingData, read_svm_rank, write_svm_rank
    from .clicks import (ClickLog, ClickLogs, click_preferences, click_probabilities,
                         examination_probabilities, make_ranking_problem,
                         preferences_from_clicks, read_click_log, simulate_click_logs,
                         simulate_clicks, write_click_log)
    from .alignment import (read_alignment_pairs, simulate_alignment_pairs,
                            write_alignment_pairs)
    from .ud_english_ewt import UD_ENGLISH_EWT_SPLITS, load_ud_english_ewt
    from .partitions import DaskBag, Files, click_totals_in_parts

__all__ = ["DataNotFoundError", "find_data", "require_data", "corpora_dir", "nltk_search_path"]

__all__ += ["SpamData", "load_spam"]

__all__ += ["load_treebank", "treebank_tagged_sents", "load_treebank_trees",
            "treebank_parsed_sents", "load_conll2000", "read_conll",
            "CONLL2000_CHUNK_TYPES", "read_svm_hmm", "write_svm_hmm", "make_hmm_corpus",
            "make_two_spirals", "load_conll2002", "read_conll2002", "Conll2002Data",
            "CONLL2002_ENTITY_TYPES"]

__all__ += ["load_dependency_treebank", "dependency_treebank_sents", "read_dependency_file"]

__all__ += ["LetorFold", "load_mq2008", "load_svm_rank_example3", "NewsgroupsData",
            "load_mini_newsgroups", "QCData", "load_qc", "read_qc", "RankingData",
            "read_svm_rank", "write_svm_rank"]

__all__ += ["ClickLog", "ClickLogs", "simulate_clicks", "simulate_click_logs",
            "click_probabilities", "examination_probabilities", "read_click_log",
            "write_click_log", "preferences_from_clicks", "click_preferences",
            "make_ranking_problem"]

__all__ += ["simulate_alignment_pairs", "read_alignment_pairs", "write_alignment_pairs"]

__all__ += ["UD_ENGLISH_EWT_SPLITS", "load_ud_english_ewt"]

__all__ += ["Files", "DaskBag", "click_totals_in_parts"]

__getattr__, __dir__ = attach(__name__, globals())
