"""Corpus loaders and file formats.

Loaders never download: they look in an explicit path, then ``$STRUCTSVM_DATA``,
then NLTK's search path (``$NLTK_DATA``). See :func:`structsvm.corpora.find_data`.
"""
from ._paths import DataNotFoundError, find_data, require_data
from .spam import SpamData, load_spam

__all__ = ["DataNotFoundError", "find_data", "require_data"]
__all__ += ["SpamData", "load_spam"]
