"""The taxonomy decoder (structsvm.structures.taxonomy.decoder): behaviours the mutation run found
untested (see docs/testing.md, "Mutation testing")."""
import numpy as np
import pytest

from structsvm.structures.taxonomy.features import TreePotentials, build_tree
from structsvm.structures.taxonomy.decoder import tree_decode


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_node_scores_are_refused_naming_the_sample(bad):
    t = build_tree({"r": ["a", "b"], "a": ["a1", "a2"]})       # nodes a b a1 a2
    scores = np.zeros((3, 4))
    scores[2, 3] = bad
    with pytest.raises(ValueError, match="Sample 2: node scores contain NaN or infinite"):
        tree_decode(TreePotentials(scores, t))


def test_excluding_the_only_path_of_a_one_leaf_tree_is_refused():
    t = build_tree({"r": ["a"]})
    scores = np.array([[0.5]])
    assert tree_decode(TreePotentials(scores, t)) == [(0,)]
    with pytest.raises(ValueError, match="no path left to choose from"):
        tree_decode(TreePotentials(scores, t), exclude=[(0,)])
