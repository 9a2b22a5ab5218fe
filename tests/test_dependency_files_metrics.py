"""CoNLL-X and CoNLL-U files, nltk DependencyGraphs, and attachment scores by hand."""
import io

import numpy as np
import pytest

from structsvm.corpora import dependency_treebank_sents
from structsvm.structures.dependency import (attachment_scores, from_dependency_graphs,
                                             is_punctuation, read_conllu, read_conllx,
                                             to_dependency_graphs, write_conllu,
                                             write_conllx)

CONLLU = """# sent_id = 1
# text = Don't stop.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\tMood=Imp\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tstop\tstop\tVERB\tVB\t_\t0\troot\t_\t_
3.1\tx\t_\t_\t_\t_\t_\t_\t3:dep\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\tSpaceAfter=No

1\tGo\tgo\tVERB\t_\t_\t0\troot\t_\t_

"""


def test_read_conllu_skips_multiword_tokens_and_empty_nodes():
    data = read_conllu(io.StringIO(CONLLU))
    assert data.heads == [[3, 3, 0, 3], [0]]
    assert data.relations == [["aux", "advmod", "root", "punct"], ["root"]]
    first = data.sentences[0][0]
    assert first["form"] == "Do" and first["xpos"] == "VBP" and first["upos"] == "AUX"
    assert first["feats"] == {"Mood": "Imp"}
    assert data.sentences[1][0]["xpos"] is None  # "_" in the file


def test_conllu_round_trip(tmp_path):
    """Without the layouts: the same words, heads and relations; with them, the
    same bytes (comments, multiword tokens and empty nodes where they were)."""
    data = read_conllu(io.StringIO(CONLLU))
    path = tmp_path / "out.conllu"
    write_conllu(path, data.sentences, data.heads, data.relations)
    again = read_conllu(path)
    assert again[:3] == data[:3]
    assert all(not layout.lines for layout in again.layouts)
    write_conllu(path, data.sentences, data.heads, data.relations, data.layouts)
    assert path.read_bytes() == CONLLU.encode("utf-8")
    assert read_conllu(path) == data


def test_conllx_round_trip_of_the_treebank(tmp_path, need_data):
    """The dependency treebank written as CoNLL-X and read back: the same words, tags
    and heads; and as CoNLL-U, read by the conllu package's own parser."""
    sents = need_data(dependency_treebank_sents)[:200]
    X, Y = [s for s, _ in sents], [h for _, h in sents]
    path = tmp_path / "wsj.conll"
    write_conllx(path, X, Y)
    data = read_conllx(path)
    assert data.heads == Y
    assert [[(t["form"], t["postag"]) for t in s] for s in data.sentences] == X
    buf = io.StringIO()
    write_conllu(buf, X, Y)
    import conllu

    parsed = conllu.parse(buf.getvalue())
    assert [[t["head"] for t in s] for s in parsed] == Y
    assert [[(t["form"], t["xpos"]) for t in s] for s in parsed] == X


@pytest.mark.parametrize("text, match", [
    ("1\ta\t_\tX\tX\t_\tx\tdep\t_\t_\n\n", r"line 1: sentence 0, word 1: head 'x' is not 0"),
    ("1\ta\t_\tX\tX\t_\t1\tdep\t_\t_\n\n", r"line 1: sentence 0, word 1: head 1 is not 0"),
    ("1\ta\t_\tX\tX\t_\t0\troot\t_\t_\n\n1\tb\t_\tX\tX\t_\t3\tdep\t_\t_\n\n",
     r"line 3: sentence 1, word 1: head 3 is not 0"),
    ("1\ta\t_\tX\tX\t_\t0\troot\t_\t_\n3\tb\t_\tX\tX\t_\t1\tdep\t_\t_\n\n",
     r"line 2: sentence 0: word id '3' is not 2"),
    ("1\ta\t_\tX\tX\t_\t_\t_\t_\t_\n\n", r"line 1: sentence 0, word 1: head '_' is not 0"),
    ("1\ta\t_\tX\tX\t_\t0\troot\t_\n\n", r"line 1: sentence 0: 9 columns"),
    ("1\ta\t_\tX\tX\tCase\t0\troot\t_\t_\n\n",
     r"line 1: sentence 0, word 1: FEATS item 'Case' is not 'Name=Value'"),
    ("2-3\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\tX\tX\t_\t0\troot\t_\t_\n\n",
     r"line 1: sentence 0: multiword token 2-3 does not start at the next word"),
    ("1\ta\t_\tX\tX\t_\t0\troot\t_\t_\n2.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n\n",
     r"line 2: sentence 0: empty node 2.1 does not follow word 2"),
    ("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\tX\tX\t_\t0\troot\t_\t_\n\n",
     r"line 1: sentence 0: multiword token 1-2 goes past its 1 words"),
    ("#c\n\n", r"line 1: sentence 0 has no words"),
])
def test_bad_conllu_is_refused_naming_file_and_sentence(tmp_path, text, match):
    path = tmp_path / "bad.conllu"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"bad\.conllu, {match}"):
        read_conllu(path)


def test_non_utf8_file_is_refused(tmp_path):
    path = tmp_path / "latin.conllu"
    path.write_bytes("1\tcaf\xe9\t_\tX\tX\t_\t0\troot\t_\t_\n\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.conllu, line 1: not UTF-8 text \(byte "
                                         r"0xe9 at column 6\)"):
        read_conllu(path)


def test_writers_check_lengths():
    with pytest.raises(ValueError, match=r"Sample 0: 2 words, 1 heads"):
        write_conllu(io.StringIO(), [[("a", "X"), ("b", "Y")]], [[0]])
    with pytest.raises(ValueError, match="1 sentences but 2 head lists"):
        write_conllx(io.StringIO(), [[("a", "X")]], [[0], [0]])


def test_dependency_graphs_against_nltk(need_data):
    """nltk's own reader of the treebank and ours give the same graphs both ways."""
    from nltk import DependencyGraph

    sents = need_data(dependency_treebank_sents)[:50]
    X, Y = [s for s, _ in sents], [h for _, h in sents]
    graphs = to_dependency_graphs(X, Y)
    for g, x, y in zip(graphs, X, Y):
        assert [(g.nodes[i]["word"], g.nodes[i]["tag"], g.nodes[i]["head"])
                for i in range(1, len(x) + 1)] == [(w, t, h) for (w, t), h in zip(x, y)]
        assert g.root["address"] == y.index(0) + 1
    text = "\n".join(f"{w}\t{t}\t{h}\t{'ROOT' if h == 0 else 'dep'}"
                     for (w, t), h in zip(X[0], Y[0]))
    data = from_dependency_graphs([DependencyGraph(text)])
    assert data.heads == [Y[0]] and [t["xpos"] for t in data.sentences[0]] == \
        [t for _, t in X[0]]


def test_punctuation_test():
    assert all(map(is_punctuation, [",", ".", "``", "''", "--", ";", "...", "$", "#",
                                    "«", "—"]))
    assert not any(map(is_punctuation, ["a", "U.S.", "-LRB-", "3.5", ""]))


def test_attachment_scores_by_hand():
    X = [[("The", "DT"), ("dog", "NN"), ("barks", "VBZ"), (".", ".")],
         [("Yes", "UH"), ("!", ".")]]
    true = [[2, 3, 0, 3], [0, 1]]
    pred = [[2, 0, 0, 2], [0, 1]]
    # 6 words, right heads: The, barks, Yes, ! = 4; without the two punctuation
    # marks: The, barks, Yes = 3 of 4
    s = attachment_scores(true, pred, X)
    assert (s.uas, s.n_words) == (4 / 6, 6) and np.isnan(s.las)
    s = attachment_scores(true, pred, X, exclude_punctuation=True)
    assert (s.uas, s.n_words) == (3 / 4, 4)
    s = attachment_scores(true, pred, X, exclude_punctuation=True,
                          punctuation_tags={"."})
    assert (s.uas, s.n_words) == (3 / 4, 4)
    rel_t = [["det", "nsubj", "root", "punct"], ["root", "punct"]]
    rel_p = [["det", "obj", "root", "punct"], ["root", "dep"]]
    s = attachment_scores(true, pred, X, relations_true=rel_t, relations_pred=rel_p)
    assert (s.uas, s.las) == (4 / 6, 3 / 6)   # "!" has its head but not its relation
    s = attachment_scores(true, pred, X, exclude_punctuation=True,
                          relations_true=rel_t, relations_pred=rel_p)
    assert (s.uas, s.las) == (3 / 4, 3 / 4)
    pairs_t = [list(zip(h, r)) for h, r in zip(true, rel_t)]
    pairs_p = [list(zip(h, r)) for h, r in zip(pred, rel_p)]
    assert attachment_scores(pairs_t, pairs_p).las == 3 / 6


def test_attachment_scores_errors():
    with pytest.raises(ValueError, match="needs the sentences X"):
        attachment_scores([[0]], [[0]], exclude_punctuation=True)
    with pytest.raises(ValueError, match="Sample 0: 2 true and 1 predicted heads"):
        attachment_scores([[0, 1]], [[0]])
    with pytest.raises(ValueError, match="no word to score"):
        attachment_scores([[0]], [[0]], [[(".", ".")]], exclude_punctuation=True)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_ud_english_ewt_round_trip_byte_for_byte(split, need_data, tmp_path):
    """Every sentence of UD English EWT read and written back with its layout: the
    same bytes (comments, multiword tokens, empty nodes, enhanced DEPS, MISC)."""
    from structsvm.corpora import load_ud_english_ewt
    from structsvm.corpora.ud_english_ewt import UD_ENGLISH_EWT_SPLITS
    from structsvm.corpora import find_data

    data = need_data(load_ud_english_ewt, split=split)
    root = find_data("ud_english_ewt")
    original = (root / UD_ENGLISH_EWT_SPLITS[split]).read_bytes()
    kinds = {text.split("\t", 1)[0].replace(".", "-").split("-")[0] != text.split("\t", 1)[0]
             for layout in data.layouts for _, text in layout.lines
             if not text.startswith("#")}
    assert kinds == {True}  # multiword tokens and empty nodes are there
    assert any("." in text.split("\t", 1)[0] for layout in data.layouts
               for _, text in layout.lines)
    path = tmp_path / "again.conllu"
    write_conllu(path, data.sentences, data.heads, data.relations, data.layouts)
    assert path.read_bytes() == original


@pytest.mark.parametrize("sentences, heads, relations, match", [
    ([[("a\tb", "X")]], [[0]], None, r"Sample 0, word 1: FORM 'a\\tb' is empty, has "
                                     r"spaces at its ends or a tab or line break"),
    ([[("a", "X")]], [[0]], [["ro ot\n"]], r"Sample 0, word 1: relation"),
    ([[("a", "X")]], [[0]], [[""]], r"Sample 0, word 1: relation '' is empty"),
    ([[{"form": "a", "xpos": "X", "feats": {"Case": "N|A"}}]], [[0]], None,
     r"Sample 0, word 1: FEATS value 'N\|A' has '\|'"),
    ([[{"form": "a", "xpos": "X", "misc": {"A=B": "x"}}]], [[0]], None,
     r"Sample 0, word 1: MISC name 'A=B' has '\|' or '='"),
    ([[{"form": " a", "xpos": "X"}]], [[0]], None, r"FORM ' a' is empty, has spaces"),
    ([[("a", "X"), ("b", "X")]], [[0, 3]], None, r"Sample 0, word 2: head 3 is not 0"),
    ([[("a", "X")]], [[(0, "root", "x")]], None, r"Sample 0: heads must be integers"),
])
def test_writers_refuse_what_would_not_read_back(sentences, heads, relations, match):
    has_misc = any("misc" in t for s in sentences for t in s if isinstance(t, dict))
    for writer in (write_conllu,) if has_misc else (write_conllu, write_conllx):
        with pytest.raises((ValueError, TypeError), match=match):
            writer(io.StringIO(), sentences, heads, relations)


def test_writer_refuses_layouts_that_do_not_fit():
    data = read_conllu(io.StringIO(CONLLU))
    layout = data.layouts[0]
    with pytest.raises(ValueError, match=r"Sample 0: the layout has DEPS of 4 words, "
                                         r"the sentence 1"):
        write_conllu(io.StringIO(), data.sentences[1:], data.heads[1:], None, [layout])
    bad = layout._replace(lines=((0, "1-3\tx\t_\t_\t_\t_\t_\t_\t_\t_"),))
    with pytest.raises(ValueError, match=r"Sample 0: would not read back as written: "
                                         r".*multiword token 1-3 goes past"):
        write_conllu(io.StringIO(), data.sentences[1:], data.heads[1:], None,
                     [bad._replace(deps=("_",))])
    with pytest.raises(ValueError, match=r"layout line \(5, 'x'\) is not"):
        write_conllu(io.StringIO(), data.sentences[:1], data.heads[:1], None,
                     [layout._replace(lines=((5, "x"),))])
    with pytest.raises(TypeError, match="a layout is a SentenceLayout"):
        write_conllu(io.StringIO(), data.sentences[:1], data.heads[:1], None, [("x",)])


def test_pairs_fill_the_relation_column():
    out = io.StringIO()
    write_conllu(out, [[("John", "NNP"), ("sleeps", "VBZ")]], [[(2, "nsubj"), (0, "root")]])
    assert read_conllu(io.StringIO(out.getvalue())).relations == [["nsubj", "root"]]
    out = io.StringIO()
    write_conllx(out, [[("John", "NNP"), ("sleeps", "VBZ")]], [[(2, "SUB"), (0, "ROOT")]])
    assert read_conllx(io.StringIO(out.getvalue())).relations == [["SUB", "ROOT"]]
