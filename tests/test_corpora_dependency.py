"""The dependency version of the treebank sample: the loader against NLTK's reader,
the split, and the reader's errors."""
import io

import pytest

from structsvm.corpora import (DataNotFoundError, dependency_treebank_sents,
                               load_dependency_treebank, load_treebank,
                               read_dependency_file, require_data)


def test_read_dependency_file_known_answer():
    text = "Pierre\tNNP\t2\nVinken\tNNP\t0\n\nIt\tPRP\t2\nran\tVBD\t0\n.\t.\t2\n"
    assert read_dependency_file(io.StringIO(text)) == [
        ([("Pierre", "NNP"), ("Vinken", "NNP")], [2, 0]),
        ([("It", "PRP"), ("ran", "VBD"), (".", ".")], [2, 0, 2])]


@pytest.mark.parametrize("text, what", [
    ("a\tDT\t3\nb\tNN\t0\n", "head '3'"),     # past the sentence's end
    ("a\tDT\t1\nb\tNN\t0\n", "head '1'"),     # its own head
    ("a\tDT\t-1\nb\tNN\t0\n", "head '-1'"),
    ("a\tDT\tx\nb\tNN\t0\n", "head 'x'")])
def test_read_dependency_file_refuses_bad_heads(text, what):
    with pytest.raises(ValueError, match=rf"sentence 0, token 1: {what} is not 0"):
        read_dependency_file(io.StringIO(text))


def test_read_dependency_file_refuses_other_columns():
    with pytest.raises(ValueError, match="line 2: expected 3 columns, got 2"):
        read_dependency_file(io.StringIO("a\tDT\t2\nb\tNN\n"))


def test_dependency_treebank_equals_nltk_reader(need_data):
    ours = need_data(dependency_treebank_sents)
    import nltk.corpus as nltk_corpus

    try:
        ref = nltk_corpus.dependency_treebank.parsed_sents()
        len(ref)
    except (LookupError, PermissionError, OSError) as exc:
        if require_data():
            pytest.fail(f"nltk cannot read the dependency treebank: {exc}")
        pytest.skip("nltk cannot read the dependency treebank from its own search path")
    # 3,914 sentences, 94,084 tokens: the data folder's README.md (counted with nltk)
    assert len(ref) == len(ours) == 3914
    assert sum(len(s) for s, _ in ours) == 94084
    for graph, (tagged, heads) in zip(ref, ours):
        nodes = [graph.nodes[i] for i in range(1, len(graph.nodes))]
        assert [(n["word"], n["tag"]) for n in nodes] == tagged
        assert [n["head"] for n in nodes] == heads


def test_dependency_split_matches_the_tagging_split(need_data):
    X_tr, Y_tr, X_te, Y_te = need_data(load_dependency_treebank)
    assert (len(X_tr), len(X_te)) == (3000, 914)
    assert all(len(x) == len(y) and y.count(0) >= 1 for x, y in zip(X_tr + X_te, Y_tr + Y_te))
    # the same sentences as the tagging split, without the traces
    T_tr, _, _, _ = load_treebank(remove_traces=True)
    assert [w for w, _ in X_tr[0]] == T_tr[0]


def test_missing_dependency_treebank_says_how_to_get_it(tmp_path):
    with pytest.raises(DataNotFoundError, match=r"nltk\.download\('dependency_treebank'\)"):
        load_dependency_treebank(tmp_path / "nowhere")


def test_dependency_split_by_files(need_data):
    """The first 80 % of the 199 files train (wsj_0001-wsj_0159: 3,396 sentences),
    the rest test (518): every article on one side, all sentences once."""
    X_tr, Y_tr, X_te, Y_te = need_data(load_dependency_treebank, split="files")
    assert (len(X_tr), len(X_te)) == (3396, 518)
    sents = dependency_treebank_sents()
    assert [s for s, _ in sents] == X_tr + X_te and [h for _, h in sents] == Y_tr + Y_te
    # the test side starts with the first sentence of wsj_0160
    from structsvm.corpora._paths import find_data

    root = find_data("dependency_treebank", nltk_subdir="corpora/dependency_treebank")
    assert read_dependency_file(root / "wsj_0160.dp")[0] == (X_te[0], Y_te[0])
    X_tr2, _, X_te2, _ = load_dependency_treebank(split="files", train_fraction=0.5)
    assert len(X_tr2) + len(X_te2) == 3914 and len(X_tr2) < len(X_tr)


def test_dependency_split_arguments_are_checked(need_data):
    need_data(dependency_treebank_sents)
    with pytest.raises(ValueError, match="split must be 'sentences' or 'files'"):
        load_dependency_treebank(split="file")
    with pytest.raises(ValueError, match="leaves 199 of 199 files for training"):
        load_dependency_treebank(split="files", train_fraction=1.0)
