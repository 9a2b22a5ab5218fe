"""What a fitted :class:`~structsvm.estimator.StructuredSVM` does: predict, score,
give Φ(x, y) of its fitted map, and save itself to a model file.

Private: :class:`structsvm.estimator.StructuredSVM` is the public interface; it
inherits :class:`FittedModel`.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _saved_state
from ..protocols import as_sequence

__all__ = ["FittedModel"]

#: examples decoded per batch when predicting or scoring
_PREDICT_CHUNK = 4096


class FittedModel:
    """Prediction and model files of a fitted estimator (a base class of
    :class:`~structsvm.estimator.StructuredSVM`, reading its fitted attributes)."""

    def _decode(self, Xe, n):
        out = []
        for start in range(0, n, _PREDICT_CHUNK):
            idx = np.arange(start, min(n, start + _PREDICT_CHUNK))
            batch = self.feature_map_.batch_potentials(Xe, self.coef_, idx)
            out.extend(self.decoder_(batch))
        return out

    def predict(self, X):
        """Best structure for every input: a list of raw outputs."""
        check_is_fitted(self, "coef_")
        X = as_sequence(X, "X")
        if len(X) == 0:
            return []
        Xe = self.feature_map_.encode_inputs(X)
        return self.feature_map_.decode_outputs(self._decode(Xe, len(X)))

    def score(self, X, Y):
        """1 − Σ_i Δ(y_i, ŷ_i) / Σ_i max Δ(y_i, ·): accuracy for zero-one loss,
        token accuracy for unnormalised Hamming loss."""
        check_is_fitted(self, "coef_")
        X, Y = as_sequence(X, "X"), as_sequence(Y, "Y")
        if len(X) != len(Y):
            raise ValueError(f"X has {len(X)} samples but Y has {len(Y)}")
        if len(X) == 0:
            raise ValueError("Cannot score an empty data set")
        fm = self.feature_map_
        Xe = fm.encode_inputs(X)
        Ye = fm.encode_outputs(Y, X)
        pred = self._decode(Xe, len(X))
        total = sum(self.loss_(y, p) for y, p in zip(Ye, pred))
        worst = sum(self.loss_.max_loss(y) for y in Ye)
        return 1.0 - total / worst if worst > 0 else 1.0

    def joint_feature(self, x, y):
        """Φ(x, y) of the fitted map (raw x and y)."""
        check_is_fitted(self, "coef_")
        return self.feature_map_.joint_feature(x, y)

    # ------------------------------------------------------------------ model files
    def save(self, path):
        """Write the fitted model to ``path`` (npz + json; see :mod:`structsvm.io`).

        The file is written to a temporary file in the same folder and then renamed,
        so ``path`` always holds a complete model (also when training is
        interrupted).

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        path
            As given.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The model is not fitted.
        ValueError
            A parameter cannot be stored (e.g. a user function); the message names it.
        FileNotFoundError
            The folder of ``path`` does not exist.
        """
        check_is_fitted(self, "coef_")
        self._save(path)
        return path

    def _save(self, path, checkpoint=None):
        _saved_state.write(path, self, checkpoint=checkpoint)
