"""The decoder registry's resolver (structsvm.structures.get_decoder): behaviours the
mutation run found untested (see docs/testing.md, "Mutation testing")."""
import pytest

from structsvm.registry import lookup
from structsvm.structures import get_decoder


def test_a_decoder_object_passes_through_and_names_resolve():
    viterbi = get_decoder("viterbi")
    assert viterbi is lookup("decoder", "viterbi")
    assert get_decoder(viterbi) is viterbi        # an object is used as given
    with pytest.raises(ValueError, match="Unknown decoder 'nope'"):
        get_decoder("nope")
    with pytest.raises(TypeError, match="decoder must be a name"):
        get_decoder(3)
