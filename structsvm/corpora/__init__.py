"""Corpus loaders and file formats.

Loaders never download: they look in an explicit path, then ``$STRUCTSVM_DATA``,
then NLTK's search path (``$NLTK_DATA``). See :func:`structsvm.corpora.find_data`.
"""
from ._paths import DataNotFoundError, find_data, require_data
from .spam import SpamData, load_spam

__all__ = ["DataNotFoundError", "find_data", "require_data"]
__all__ += ["SpamData", "load_spam"]
# sequences
from .conll import CONLL2000_CHUNK_TYPES, load_conll2000, read_conll  # noqa: E402
from .svm_hmm import read_svm_hmm, write_svm_hmm  # noqa: E402
from .synthetic import make_hmm_corpus, make_two_spirals  # noqa: E402
from .treebank import load_treebank, treebank_tagged_sents  # noqa: E402

__all__ += ["load_treebank", "treebank_tagged_sents", "load_conll2000", "read_conll",
            "CONLL2000_CHUNK_TYPES", "read_svm_hmm", "write_svm_hmm", "make_hmm_corpus",
            "make_two_spirals"]
# taxonomies and rankings
from .letor import LetorFold, load_mq2008, load_svm_rank_example3  # noqa: E402
from .newsgroups import NewsgroupsData, load_mini_newsgroups  # noqa: E402
from .qc import QCData, load_qc, read_qc  # noqa: E402
from .svmlight import RankingData, read_svm_rank, write_svm_rank  # noqa: E402

__all__ += ["LetorFold", "load_mq2008", "load_svm_rank_example3", "NewsgroupsData",
            "load_mini_newsgroups", "QCData", "load_qc", "read_qc", "RankingData",
            "read_svm_rank", "write_svm_rank"]
