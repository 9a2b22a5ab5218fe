"""Degenerate training labels: a single class warns; missing or ambiguous labels fail."""
import numpy as np
import pytest

import structsvm
from structsvm.structures import SequenceFeatures, TaxonomyFeatures

X3 = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
S3 = [["the", "dog"], ["a", "cat", "runs"], ["dogs"]]


def test_single_class_warns():
    with pytest.warns(UserWarning, match="Every training label is 'a'"):
        model = structsvm.fit(X3, ["a", "a", "a"])
    assert model.predict(X3) == ["a", "a", "a"]


def test_single_tag_warns():
    with pytest.warns(UserWarning, match="Every training tag is 'N'"):
        structsvm.fit(S3, [["N", "N"], ["N", "N", "N"], ["N"]],
                      feature_map=SequenceFeatures(), max_iter=3)


@pytest.mark.parametrize("bad, what", [(None, "None"), (float("nan"), "NaN"),
                                       (np.float32("nan"), "NaN")])
def test_missing_labels_are_errors(bad, what):
    with pytest.raises(ValueError, match=f"Sample 2: label is {what}"):
        structsvm.fit(X3, ["a", "b", bad])
    with pytest.raises(ValueError, match=f"Sample 1: tag is {what}"):
        structsvm.fit(S3, [["D", "N"], ["D", bad, "V"], ["N"]],
                      feature_map=SequenceFeatures())
    with pytest.raises(ValueError, match=f"Sample 0: label is {what}"):
        structsvm.fit(X3, [bad, ("a", "b"), ("a", "c")], feature_map=TaxonomyFeatures())


def test_labels_that_print_the_same_are_errors():
    with pytest.raises(ValueError, match="Sample 2: label '1' \\(str\\) and the label 1 "
                                         "\\(int\\) of sample 0 .*print the same"):
        structsvm.fit(X3, [1, 2, "1"])
    with pytest.raises(ValueError, match="Sample 2: tag np.int64\\(7\\)|Sample 2: tag 7"):
        structsvm.fit(S3, [["7", "N"], ["D", "N", "V"], [np.int64(7)]],
                      feature_map=SequenceFeatures())


def test_ordinary_labels_pass_silently(recwarn):
    structsvm.fit(X3, [1, 2.0, 1.0])          # 1 and 1.0 are one class to Python
    structsvm.fit(X3, [("x", 1), ("x", 2), 3])
    structsvm.fit(S3, [np.array(["D", "N"]), ["D", "N", "V"], ("N",)],
                  feature_map=SequenceFeatures(), max_iter=3)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)
                and "Every training" in str(w.message)]
