"""Write corpora/manifest.json (and its packaged copy) from a folder of the data sets.

Usage, from the repository root::

    python corpora/make_manifest.py /path/to/shared/data          # write both copies
    python corpora/make_manifest.py /path/to/shared/data --check  # exit 1 if stale

The descriptions below restate facts from the staged data folder's README
(``shared/data/README.md``, cited per corpus as ``reference``); sizes and SHA-256
sums are computed from the files themselves. The output is deterministic (sorted
paths, one line per file), so a re-run on unchanged data gives the same bytes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUTS = [HERE / "manifest.json", HERE.parent / "structsvm" / "corpora" / "manifest.json"]

_README = "shared/data/README.md"

#: per corpus: facts (written for this project from the data README), folder layout
CORPORA = {
    "treebank": dict(
        description="NLTK's 10% sample of the Penn Treebank (Wall Street Journal): 199 "
                    "files, 3,914 sentences, each POS-tagged (100,676 tagged tokens, 46 "
                    "tags including -NONE-) and parsed. Used for POS tagging (sequences) "
                    "and CFG parsing.",
        source="NLTK data package 'treebank' (copied from nltk/nltk commit c90be5e1b36a, "
               "nltk_data/corpora/treebank.zip); Penn Treebank, LDC 1995.",
        terms="(C) University of Pennsylvania / LDC 1995; made available by NLTK under "
              "fair use to illustrate NLTK tools; non-commercial use only.",
        reference=f"{_README}, section 1",
        loader="structsvm.corpora.load_treebank",
        path="nltk_data/corpora/treebank", nltk="treebank",
        archive="nltk_data/corpora/treebank.zip"),
    "dependency_treebank": dict(
        description="The treebank sample converted to dependencies: 199 files "
                    "(wsj_0001.dp ... wsj_0199.dp), 3,914 sentences, 94,084 tokens; one "
                    "token a line: word, POS tag and the 1-based index of its head (0 "
                    "for the root), a blank line between sentences. Used for dependency "
                    "parsing (arc-factored structures).",
        source="NLTK data package 'dependency_treebank' (copied from nltk/nltk_data "
               "commit 5db857e6f7df, packages/corpora/dependency_treebank.zip, and "
               "unzipped); Penn Treebank, LDC 1995.",
        terms="As the treebank sample: (C) University of Pennsylvania / LDC 1995; made "
              "available by NLTK for research and teaching; non-commercial use only.",
        reference=f"{_README}, section 'Dependency treebank'",
        loader="structsvm.corpora.load_dependency_treebank",
        path="nltk_data/corpora/dependency_treebank", nltk="dependency_treebank",
        archive="nltk_data/corpora/dependency_treebank.zip"),
    "conll2000": dict(
        description="CoNLL-2000 chunking shared task: WSJ sections 15-18 for training "
                    "(train.txt, 8,936 sentences, 211,727 tokens) and section 20 for "
                    "testing (test.txt, 2,012 sentences, 47,377 tokens); columns word, "
                    "POS, IOB chunk tag; 11 chunk types.",
        source="NLTK data package 'conll2000' (copied from nltk/nltk commit c90be5e1b36a); "
               "shared task page http://www.cnts.ua.ac.be/conll2000/chunking/ "
               "(Tjong Kim Sang & Buchholz 2000).",
        terms="None stated by the package or its README; the text is the WSJ part of the "
              "Penn Treebank (LDC), so treat it as research use only.",
        reference=f"{_README}, section 2",
        loader="structsvm.corpora.load_conll2000",
        path="nltk_data/corpora/conll2000", nltk="conll2000",
        archive="nltk_data/corpora/conll2000.zip"),
    "conll2002": dict(
        description="CoNLL-2002 named-entity recognition, Dutch part only: ned.train "
                    "(15,806 sentences, 202,644 tokens, 287 articles), ned.testa (2,895 / "
                    "37,687 / 74), ned.testb (5,195 / 68,875 / 119); columns word, POS "
                    "(MBT tagger), IOB2 tag over PER, LOC, ORG, MISC; -DOCSTART- lines "
                    "separate articles (sentences are shuffled within each article).",
        source="NLTK data package 'conll2002' (copied from nltk/nltk commit c90be5e1b36a; "
               "the Spanish files of the package are not part of this corpus); text "
               "from the Belgian newspaper De Morgen, 2000; "
               "http://lcg-www.uia.ac.be/conll2002/ner/ (Tjong Kim Sang 2002).",
        terms="Its README: research applications in the context of the CoNLL-2002 shared "
              "task only; no permission for other uses, especially commercial ones.",
        reference=f"{_README}, section 9",
        loader="structsvm.corpora.load_conll2002",
        path="nltk_data/corpora/conll2002", nltk="conll2002", archive=None),
    "qc": dict(
        description="UIUC question classification (Li & Roth): train.txt 5,452 "
                    "questions, test.txt 500, each labelled COARSE:fine in a 2-level "
                    "taxonomy (6 coarse, 50 fine classes).",
        source="NLTK data package 'qc' (copied from nltk/nltk commit c90be5e1b36a); "
               "upstream http://l2r.cs.uiuc.edu/~cogcomp/Data/QA/QC/ (Li & Roth, "
               "COLING 2002).",
        terms="None stated by the package or the source; cite Li & Roth (2002).",
        reference=f"{_README}, section 3",
        loader="structsvm.corpora.load_qc",
        path="nltk_data/corpora/qc", nltk="qc", archive="nltk_data/corpora/qc.zip"),
    "mini_newsgroups": dict(
        description="The 'mini' 20 Newsgroups subset: 20 groups x 100 raw Usenet posts "
                    "(2,000 files); the dotted group names form a taxonomy "
                    "(comp -> sys -> mac -> hardware, ...).",
        source="UCI KDD Archive's mini_newsgroups subset of Ken Lang's 20 Newsgroups "
               "(copied from GitHub vaishnavivisweswaraiah/IR_TextMining, commit "
               "511b749f62be, without a stray .DS_Store).",
        terms="None stated by the copy it was taken from; the UCI repository is believed "
              "to list 20 Newsgroups under CC BY 4.0 (not verified).",
        reference=f"{_README}, section 4",
        loader="structsvm.corpora.load_mini_newsgroups",
        path="mini_newsgroups", nltk=None, archive=None),
    "spam_ng_ex6": dict(
        description="Spam classification data of exercise 6 of Andrew Ng's machine "
                    "learning course: spamTrain.mat (X 4000 x 1899 binary word "
                    "indicators, 1,277 spam), spamTest.mat (1000 x 1899, 308 spam), "
                    "vocab.txt (1,899 stemmed words) and four sample e-mails.",
        source="Stanford/Coursera ML course material derived from the SpamAssassin Public "
               "Corpus (copied from GitHub dibgerge/ml-coursera-python-assignments, "
               "commit d901c1ca7176, Exercise6/Data).",
        terms="No licence stated; course material, use for teaching and research.",
        reference=f"{_README}, section 5",
        loader="structsvm.corpora.load_spam",
        path="spam_ng_ex6", nltk=None, archive=None),
    "letor4_mq2008": dict(
        description="LETOR 4.0 MQ2008 supervised ranking, subsets S1-S5 (QueryLevelNorm): "
                    "15,211 query-document pairs in 784 queries, 46 features, relevance "
                    "0/1/2; fold k trains on S_k..S_k+2, validates on S_k+3, tests on "
                    "S_k+4.",
        source="Microsoft Research LETOR 4.0 (Qin & Liu, arXiv:1306.2597, 2013); copied "
               "from GitHub meta-toolkit/meta, commit eab9748c3c40, data/MQ2008.",
        terms="LETOR's online agreement: using the data sets binds you to its licence "
              "(text not reproduced here); cite Qin & Liu (2013).",
        reference=f"{_README}, section 6",
        loader="structsvm.corpora.load_mq2008",
        path="letor4_mq2008", nltk=None, archive=None),
    "svm_rank_example3": dict(
        description="Joachims' svm_rank example3: train.dat (12 examples in 3 queries) and "
                    "test.dat (4 examples in 1 query), 5 features; a tiny ranking sanity "
                    "check.",
        source="example3.tar.gz of Joachims' SVM-rank "
               "(https://www.cs.cornell.edu/people/tj/svm_light/svm_rank.html); copied "
               "from GitHub aplz/svmLightJni-6.02 with the original CRLF line endings "
               "restored (checksums equal those published for the upstream files).",
        terms="None given for the data; SVM-light/SVM-rank are free for scientific use.",
        reference=f"{_README}, section 7",
        loader="structsvm.corpora.load_svm_rank_example3",
        path="svm_rank_example3", nltk=None, archive=None),
    "svm_hmm_example7": dict(
        description="Joachims' svm_hmm example7: POS-tagged token feature vectors, "
                    "declaration_of_independence.dat (36 sentences, 1,486 tokens) for "
                    "training and gettysburg_address.dat (10 sentences, 290 tokens) for "
                    "testing.",
        source="The example shipped with Joachims' SVM-hmm "
               "(https://www.cs.cornell.edu/people/tj/svm_light/svm_hmm.html); copied "
               "from GitHub We-can-apply-GPU/svm_hmm, commit 25eb7d4c53c5.",
        terms="SVM-struct licence: free of charge for non-commercial research and "
              "education; not to be redistributed without the author's permission.",
        reference=f"{_README}, section 8",
        loader="structsvm.corpora.read_svm_hmm",
        path="svm_hmm_example7", nltk=None, archive=None),
    "ud_english_ewt": dict(
        description="Universal Dependencies English Web Treebank (EWT), CoNLL-U: "
                    "en_ewt-ud-{train,dev,test}.conllu, 12,544 / 2,001 / 2,077 "
                    "sentences, 204,577 / 25,147 / 25,094 words of web text; lemmas, "
                    "UPOS, XPOS, morphological features and labelled heads (51 "
                    "relations in train). Multiword tokens and empty nodes are no words "
                    "of the basic tree. Used for labelled dependency parsing and POS "
                    "tagging.",
        source="GitHub UniversalDependencies/UD_English-EWT, commit 15d613d8447b "
               "(2025-05-10); dev, test, LICENSE.txt and README.md copied byte for "
               "byte, train rebuilt from the per-document sources with the release's "
               "git blob id (Silveira et al., LREC 2014).",
        terms="CC BY-SA 4.0 (LICENSE.txt); cite Silveira et al. (2014).",
        reference=f"{_README}, section 'UD English Web Treebank'",
        loader="structsvm.corpora.load_ud_english_ewt",
        path="ud_english_ewt", nltk=None, archive=None),
}


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _size(n_bytes, n_files):
    size = (f"{n_bytes / 1e6:.1f} MB" if n_bytes >= 1e5 else
            f"{n_bytes / 1e3:.1f} KB")
    return f"{size} in {n_files} file{'s' if n_files != 1 else ''}"


def build(data_root):
    """The manifest as a dict, with sizes and checksums computed from ``data_root``."""
    data_root = Path(data_root)
    corpora = {}
    for name, meta in CORPORA.items():
        folder = data_root / meta["path"]
        if not folder.is_dir():
            raise SystemExit(f"{folder}: not found (is {data_root} the shared data "
                             "folder?)")
        files = {p.relative_to(folder).as_posix(): {"bytes": p.stat().st_size,
                                                    "sha256": _sha256(p)}
                 for p in sorted(folder.rglob("*")) if p.is_file()}
        total = sum(f["bytes"] for f in files.values())
        entry = {k: meta[k] for k in ("description", "source", "terms", "reference",
                                      "loader", "path")}
        entry["size"] = _size(total, len(files))
        entry["bytes"] = total
        entry["nltk"] = (None if meta["nltk"] is None else
                         {"subdir": f"corpora/{meta['nltk']}", "package": meta["nltk"]})
        if meta["archive"] is not None:
            z = data_root / meta["archive"]
            entry["archive"] = {"path": meta["archive"], "bytes": z.stat().st_size,
                                "sha256": _sha256(z)}
        entry["files"] = files
        corpora[name] = entry
    return {"version": 1,
            "about": "Corpora used by structsvm's examples, tests and benchmarks. Written "
                     "by corpora/make_manifest.py; see corpora/README.md.",
            "corpora": corpora}


def render(manifest):
    """Deterministic JSON text: metadata indented, one line per file."""
    out = ["{", f'  "version": {manifest["version"]},',
           f'  "about": {json.dumps(manifest["about"], ensure_ascii=False)},',
           '  "corpora": {']
    names = list(manifest["corpora"])
    for i, name in enumerate(names):
        entry = manifest["corpora"][name]
        out.append(f"    {json.dumps(name)}: {{")
        for key, value in entry.items():
            if key == "files":
                continue
            out.append(f"      {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
        out.append('      "files": {')
        rels = list(entry["files"])
        for j, rel in enumerate(rels):
            f = entry["files"][rel]
            comma = "," if j < len(rels) - 1 else ""
            out.append(f'        {json.dumps(rel, ensure_ascii=False)}: {{"bytes": '
                       f'{f["bytes"]}, "sha256": "{f["sha256"]}"}}{comma}')
        out.append("      }")
        out.append("    }" + ("," if i < len(names) - 1 else ""))
    out += ["  }", "}", ""]
    text = "\n".join(out)
    assert json.loads(text) == manifest
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_root", help="folder laid out like the shared data folder")
    ap.add_argument("--check", action="store_true",
                    help="only compare; exit 1 when a written manifest is out of date")
    args = ap.parse_args(argv)
    text = render(build(args.data_root))
    stale = [p for p in OUTPUTS if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"out of date: {p}")
        return 1 if stale else 0
    for p in OUTPUTS:
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
