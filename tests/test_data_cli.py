"""``structsvm data list|verify|fetch``, the corpus manifest, the loaders' search order
and the CoNLL-2002 loader.

Tests that need the real files use the shared data folder given by
``$STRUCTSVM_DATA``; without it they skip, and with ``STRUCTSVM_REQUIRE_DATA=1`` (CI)
they fail.
"""
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import structsvm
from structsvm.cli import main
from structsvm.corpora import (DataNotFoundError, corpora_dir, load_conll2002, load_spam,
                               load_svm_rank_example3, read_conll2002, require_data)
from structsvm.corpora import fetch
from structsvm.corpora import manifest as mf

REPO = Path(structsvm.__file__).resolve().parents[1]


@pytest.fixture
def shared():
    """The shared data folder ($STRUCTSVM_DATA), or a skip (a fail under CI)."""
    root = os.environ.get("STRUCTSVM_DATA")
    if root and (Path(root) / "SHA256SUMS").is_file():
        return Path(root)
    msg = ("the shared data folder is not available: set $STRUCTSVM_DATA to it "
           f"(got {root!r})")
    if require_data():
        pytest.fail(f"required data missing: {msg}")
    pytest.skip(msg)


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No data configured anywhere: no env vars, empty NLTK path, empty corpora folder."""
    import nltk.data

    monkeypatch.delenv("STRUCTSVM_DATA", raising=False)
    monkeypatch.delenv("NLTK_DATA", raising=False)
    monkeypatch.setattr(nltk.data, "path", [])
    corpora = tmp_path / "corpora"
    monkeypatch.setenv("STRUCTSVM_CORPORA", str(corpora))
    return corpora


def _copy_corpus(shared, name, dest):
    src = shared / mf.corpus_info(name).path
    shutil.copytree(src, dest / name)
    return dest / name


# -- the manifest ------------------------------------------------------------------

def test_manifest_copies_are_identical():
    checkout = REPO / "corpora" / "manifest.json"
    if not checkout.is_file():
        pytest.skip("not a source checkout (no corpora/manifest.json)")
    assert checkout.read_bytes() == mf.MANIFEST_PATH.read_bytes(), (
        "corpora/manifest.json and structsvm/corpora/manifest.json differ; run "
        "python corpora/make_manifest.py /path/to/shared/data")


def test_manifest_lists_every_corpus_and_layout():
    infos = mf.load_manifest()
    assert list(infos) == ["treebank", "dependency_treebank", "conll2000", "conll2002", "qc", "mini_newsgroups",
                           "spam_ng_ex6", "letor4_mq2008", "svm_rank_example3",
                           "svm_hmm_example7", "ud_english_ewt"]
    tb = infos["treebank"]
    assert (tb.path, tb.nltk_subdir, tb.nltk_package) == (
        "nltk_data/corpora/treebank", "corpora/treebank", "treebank")
    assert len(tb.files) == 802 and infos["mini_newsgroups"].nltk_package is None
    assert sorted(infos["conll2002"].files) == ["README", "ned.testa", "ned.testb",
                                                "ned.train"]
    for info in infos.values():
        assert info.description and info.source and info.terms and info.size
        assert all(len(d) == 64 and b > 0 for b, d in info.files.values())


def test_manifest_covers_every_shared_file(shared):
    """Every line of the shared folder's SHA256SUMS is in the manifest, and no more."""
    ours = {}
    for info in mf.load_manifest().values():
        ours.update({f"{info.path}/{rel}": d for rel, (_, d) in info.files.items()})
        if info.archive:
            ours[info.archive["path"]] = info.archive["sha256"]
    ref = dict(line.split()[::-1] for line in
               (shared / "SHA256SUMS").read_text().splitlines() if line.strip())
    assert ours == ref


def test_load_manifest_rejects_other_files(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"version": 2, "corpora": {}}))
    with pytest.raises(ValueError, match="version-1"):
        mf.load_manifest(bad)
    with pytest.raises(KeyError, match="Unknown corpus 'nope'"):
        mf.corpus_info("nope")


# -- search order and error messages -----------------------------------------------

def test_corpora_dir_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("STRUCTSVM_CORPORA", raising=False)
    if (REPO / "corpora" / "manifest.json").is_file():
        assert corpora_dir() == REPO / "corpora"
    monkeypatch.setenv("STRUCTSVM_CORPORA", str(tmp_path))
    assert corpora_dir() == tmp_path


def test_missing_corpus_error_names_the_command(clean_env):
    with pytest.raises(DataNotFoundError) as exc:
        load_conll2002(split="testa")
    msg = str(exc.value)
    assert "structsvm data fetch conll2002 --from /path/to/data" in msg
    assert "nltk.download('conll2002')" in msg
    assert str(clean_env / "conll2002") in msg  # the corpora folder was searched
    with pytest.raises(DataNotFoundError,
                       match=r"structsvm data fetch spam_ng_ex6 --from /path/to/data\."):
        load_spam()
    with pytest.raises(ValueError, match="split must be one of"):
        load_conll2002(split="test")


def test_gitignore_keeps_data_out_of_git():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "check-ignore", "--no-index",
                          "corpora/treebank/combined/wsj_0001.mrg", "corpora/x.npz",
                          "corpora/README.md", "corpora/manifest.json",
                          "corpora/make_manifest.py"],
                         cwd=REPO, capture_output=True, text=True)
    ignored = set(out.stdout.split())
    assert ignored == {"corpora/treebank/combined/wsj_0001.mrg", "corpora/x.npz"}


# -- structsvm data list / verify --------------------------------------------------

def test_list_without_data_says_missing_with_the_command(clean_env, capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "missing" in line]
    assert len(lines) == 11
    assert "structsvm data fetch treebank --from /path/to/data" in out
    assert "nltk.download('treebank')" in out
    assert "0 of 11 corpora found" in out


def test_list_runs_as_a_command_in_a_bare_environment(tmp_path):
    """What a fresh clone sees: no data variables at all, nothing fetched yet."""
    import sys

    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
           "STRUCTSVM_CORPORA": str(tmp_path / "corpora")}
    out = subprocess.run([sys.executable, "-m", "structsvm.cli", "data", "list"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "$STRUCTSVM_DATA (not set)" in out.stdout
    import re

    assert re.search(r"^svm_rank_example3 +missing  get it with: structsvm data fetch "
                     r"svm_rank_example3 --from /path/to/data$", out.stdout, re.M)


def test_verify_passes_on_shared_data(shared, clean_env, monkeypatch, capsys):
    assert main(["data", "verify", "--from", str(shared)]) == 0
    assert capsys.readouterr().out.count(": OK,") == 11
    monkeypatch.setenv("STRUCTSVM_DATA", str(shared))
    assert main(["data", "verify", "conll2002", "qc"]) == 0
    assert main(["data", "list"]) == 0
    assert "11 of 11 corpora found" in capsys.readouterr().out


def test_verify_reports_missing_and_unknown(clean_env, capsys):
    assert main(["data", "verify", "svm_rank_example3"]) == 1
    out = capsys.readouterr().out
    assert "svm_rank_example3: MISSING" in out and "structsvm data fetch" in out
    assert main(["data", "verify", "nope"]) == 2
    assert "unknown corpus 'nope'" in capsys.readouterr().err


def test_verify_detects_a_corrupted_file(shared, tmp_path, capsys):
    folder = _copy_corpus(shared, "svm_rank_example3", tmp_path / "data")
    data = bytearray((folder / "train.dat").read_bytes())
    data[10] ^= 0x01
    (folder / "train.dat").write_bytes(bytes(data))
    (folder / "test.dat").unlink()
    assert main(["data", "verify", "svm_rank_example3", "--from",
                 str(tmp_path / "data")]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "train.dat: sha256 differs" in out
    assert "test.dat: missing" in out


# -- structsvm data fetch ----------------------------------------------------------

def test_fetch_then_loaders_find_it_with_no_env(shared, clean_env, capsys):
    assert main(["data", "fetch", "conll2002", "svm_rank_example3",
                 "--from", str(shared)]) == 0
    assert "verified and installed" in capsys.readouterr().out
    assert sorted(p.name for p in clean_env.iterdir()) == ["conll2002",
                                                           "svm_rank_example3"]
    X, Y, doc = load_conll2002(split="testa")  # found in $STRUCTSVM_CORPORA only
    assert (len(X), int(doc.max()) + 1) == (2895, 74)
    train, test = load_svm_rank_example3()
    assert (len(train.X), len(test.X)) == (3, 1)
    assert mf.locate_corpus("conll2002") == (clean_env / "conll2002", "corpora folder")
    assert main(["data", "fetch", "svm_rank_example3", "--from", str(shared)]) == 0
    assert "already in" in capsys.readouterr().out
    assert main(["data", "verify", "conll2002"]) == 0


def test_fetch_never_leaves_a_corrupt_copy(shared, clean_env, tmp_path, capsys):
    src = _copy_corpus(shared, "svm_rank_example3", tmp_path / "src")
    (src / "test.dat").write_bytes((src / "test.dat").read_bytes()[:-1] + b"X")
    assert main(["data", "fetch", "svm_rank_example3", "--from",
                 str(tmp_path / "src")]) == 1
    assert "test.dat: sha256 differs" in capsys.readouterr().err
    assert list(clean_env.iterdir()) == []  # no target, no temporary folder


def test_fetch_replaces_a_bad_copy_only_with_a_good_one(shared, clean_env, capsys):
    bad = _copy_corpus(shared, "svm_rank_example3", clean_env)
    (bad / "train.dat").write_text("garbage")
    assert main(["data", "verify", "svm_rank_example3"]) == 1
    assert main(["data", "fetch", "svm_rank_example3", "--from", str(shared)]) == 0
    assert main(["data", "verify", "svm_rank_example3"]) == 0
    assert [p.name for p in clean_env.iterdir()] == ["svm_rank_example3"]


def test_fetch_without_network_or_source(clean_env, monkeypatch, capsys):
    import nltk

    def offline(*args, **kwargs):
        raise ValueError("Error loading qc: <urlopen error no network>")

    monkeypatch.setattr(nltk, "download", offline)
    assert main(["data", "fetch", "qc"]) == 1
    err = capsys.readouterr().err
    assert "no network?" in err and "structsvm data fetch qc --from /path/to/data" in err
    assert main(["data", "fetch", "spam_ng_ex6"]) == 1
    assert "cannot be downloaded automatically" in capsys.readouterr().err
    assert list(clean_env.iterdir()) == []


def test_fetch_downloads_nltk_corpora(shared, clean_env, monkeypatch):
    """Without --from, NLTK corpora come from nltk.download (here a stand-in that
    unpacks the shared zip, as NLTK does) and are verified the same way."""
    import zipfile

    import nltk

    calls = []

    def fake_download(package, download_dir=None, **kwargs):
        calls.append(package)
        target = Path(download_dir) / "corpora"
        target.mkdir(parents=True)
        shutil.copy(shared / "nltk_data" / "corpora" / f"{package}.zip", target)
        with zipfile.ZipFile(target / f"{package}.zip") as zf:
            zf.extractall(target)
        return True

    monkeypatch.setattr(nltk, "download", fake_download)
    target, copied = fetch.fetch_corpus("qc")
    assert calls == ["qc"] and copied and target == clean_env / "qc"
    assert sorted(p.name for p in clean_env.iterdir()) == ["qc"]
    assert mf.verify_corpus("qc").ok


def test_fetch_needs_a_corpora_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("STRUCTSVM_CORPORA", raising=False)
    monkeypatch.setattr(fetch, "corpora_dir", lambda: None)
    with pytest.raises(DataNotFoundError, match=r"\$STRUCTSVM_CORPORA"):
        fetch.fetch_corpus("qc", source=tmp_path)


# -- CoNLL-2002 --------------------------------------------------------------------

def test_read_conll2002_documents_and_errors():
    text = ("Eerst Adv O\n\n"
            "-DOCSTART- -DOCSTART- O\nJan N B-PER\nloopt V O\n\nGent N B-LOC\n\n"
            "-DOCSTART- -DOCSTART- O\n"
            "-DOCSTART- -DOCSTART- O\nDag Int O\n")
    data = read_conll2002(io.StringIO(text))
    assert data.X[1] == [("Jan", "N"), ("loopt", "V")] and data.Y[2] == ["B-LOC"]
    assert data.doc.tolist() == [0, 1, 1, 2]  # an empty article takes no id
    with pytest.raises(ValueError, match="line 2: expected 3 columns"):
        read_conll2002(io.StringIO("a N O\nb N\n"))


def test_conll2002_counts(need_data):
    # counts checked against nltk.corpus.conll2002.iob_sents and the shared-task paper
    expected = {"train": (15806, 202644, 287), "testa": (2895, 37687, 74),
                "testb": (5195, 68875, 119)}
    for split, (n_sents, n_tokens, n_docs) in expected.items():
        X, Y, doc = need_data(load_conll2002, split=split)
        assert (len(X), sum(map(len, X)), int(doc.max()) + 1) == (
            n_sents, n_tokens, n_docs)
        assert len(np.unique(doc)) == n_docs and np.all(np.diff(doc) >= 0)
        assert all(len(x) == len(y) for x, y in zip(X, Y))
    X, Y, _ = load_conll2002(split="train")
    assert X[0][:2] == [("De", "Art"), ("tekst", "N")]
    starts = {}
    for y in Y:
        for t in y:
            if t.startswith("B-"):
                starts[t[2:]] = starts.get(t[2:], 0) + 1
    assert starts == {"LOC": 3208, "MISC": 3338, "ORG": 2082, "PER": 4716}


def test_ud_english_ewt_counts(need_data):
    # sentence and word counts as the data README states them (`# sent_id` lines and
    # integer ids); multiword tokens and empty nodes are no words of the tree
    from structsvm.corpora import load_ud_english_ewt

    expected = {"train": (12544, 204577), "dev": (2001, 25147), "test": (2077, 25094)}
    for split, (n_sents, n_words) in expected.items():
        data = need_data(load_ud_english_ewt, split=split)
        assert (len(data.sentences), sum(map(len, data.heads))) == (n_sents, n_words)
        assert all(len(s) == len(h) == len(r) for s, h, r in
                   zip(data.sentences, data.heads, data.relations))
        assert all(h.count(0) >= 1 for h in data.heads)
    train = load_ud_english_ewt(split="train")
    assert len({r for rels in train.relations for r in rels}) == 51
    assert set(train.sentences[0][0]) == {"form", "lemma", "upos", "xpos", "feats",
                                          "misc"}
    with pytest.raises(ValueError, match="split must be one of"):
        load_ud_english_ewt(split="testb")
