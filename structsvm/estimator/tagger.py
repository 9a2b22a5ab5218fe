"""An NLTK tagger (``nltk.tag.api.TaggerI``) backed by a fitted structsvm sequence model."""
from __future__ import annotations

from nltk.tag.api import TaggerI

__all__ = ["StructSVMTagger"]


class StructSVMTagger(TaggerI):
    """Tag token lists with a structural SVM; usable wherever NLTK expects a tagger.

    Parameters
    ----------
    model : StructuredSVM
        A fitted model whose feature map is a
        :class:`~structsvm.structures.sequence.features.SequenceFeatures` on token lists (e.g. trained by
        :meth:`train`).

    Notes
    -----
    ``tag``, ``tag_sents`` and ``accuracy`` follow NLTK's ``TaggerI``. Words unseen
    in training are tagged from their affix, shape and context features; the tags
    are always tags seen in training (a gold tag unseen in training simply counts as
    an error in ``accuracy``). ``tag([])`` returns ``[]``. Save with :meth:`save`
    (npz + json, never pickle) and reload with :meth:`load`.

    Examples
    --------
    >>> from structsvm.corpora import make_hmm_corpus
    >>> X, Y = make_hmm_corpus(60, random_state=0)
    >>> tagger = StructSVMTagger.train([list(zip(x, y)) for x, y in zip(X, Y)],
    ...                                features="word", learner="perceptron",
    ...                                random_state=0)
    >>> [tag for _, tag in tagger.tag(X[0][:3])] == Y[0][:3]
    True
    """

    def __init__(self, model):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(model, "coef_")
        if type(model.feature_map_).structure != "sequence":
            raise TypeError(f"StructSVMTagger needs a sequence model, got a "
                            f"{type(model.feature_map_).__name__} model")
        self.model = model

    @classmethod
    def train(cls, tagged_sents, *, features="pos", min_count=1, **params):
        """Fit a tagger on NLTK-style tagged sentences (lists of (word, tag) pairs).

        Parameters
        ----------
        tagged_sents : list of list of (str, hashable)
        features, min_count
            See :class:`~structsvm.structures.sequence.SequenceFeatures`.
        **params
            Passed to :class:`~structsvm.StructuredSVM` (C, learner, ...).
        """
        from ._estimator import fit
        from ..structures.sequence import SequenceFeatures

        X, Y = [], []
        for i, sent in enumerate(tagged_sents):
            try:
                words, tags = zip(*sent) if len(sent) else ((), ())
            except (TypeError, ValueError):
                raise ValueError(f"Sentence {i}: expected a list of (word, tag) pairs"
                                 ) from None
            X.append(list(words))
            Y.append(list(tags))
        model = fit(X, Y, feature_map=SequenceFeatures(features=features,
                                                       min_count=min_count),
                    decoder="viterbi", **params)
        return cls(model)

    def tag(self, tokens):
        """Tag one sentence: a list of (token, tag) pairs."""
        return self.tag_sents([tokens])[0]

    def tag_sents(self, sentences):
        """Tag several sentences at once (one batched decode)."""
        sents = [list(s) for s in sentences]
        keep = [i for i, s in enumerate(sents) if s]
        out = [[] for _ in sents]
        if keep:
            pred = self.model.predict([sents[i] for i in keep])
            for i, tags in zip(keep, pred):
                out[i] = list(zip(sents[i], tags))
        return out

    def save(self, path):
        """Write the model to ``path`` (structsvm's npz + json model format)."""
        self.model.save(path)
        return path

    @classmethod
    def load(cls, path):
        """A tagger from a model file written by :meth:`save` or ``model.save``."""
        from ._estimator import load

        return cls(load(path))
