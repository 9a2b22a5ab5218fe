"""``structsvm data fetch`` against crafted manifests, sources and archives.

Nothing outside the corpora folder is written, no source file is touched, every
failure is a message (never a traceback) and leaves nothing behind.
"""
import hashlib
import io
import json
import os
import time
import zipfile
from pathlib import Path

import pytest

from structsvm.cli import main
from structsvm.corpora import fetch
from structsvm.corpora import manifest as mf


def _entry(files, path="evil", nltk=None, archive=None):
    c = {"description": "d", "size": "s", "source": "src", "terms": "t", "path": path,
         "files": {rel: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                   for rel, data in files.items()}}
    if nltk:
        c["nltk"] = nltk
    if archive:
        c["archive"] = archive
    return c


def _manifest(tmp_path, monkeypatch, corpora):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"version": 1, "corpora": corpora}))
    monkeypatch.setattr(mf, "MANIFEST_PATH", path)
    return path


@pytest.fixture
def dest(tmp_path, monkeypatch):
    folder = tmp_path / "corpora"
    monkeypatch.setenv("STRUCTSVM_CORPORA", str(folder))
    return folder


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*"))


@pytest.mark.parametrize("rel", ["../outside.txt", "/tmp/abs.txt", "a\\b.txt", "a/../../b",
                                 "./a.txt", "a//b", "C:/x.txt"])
def test_manifest_paths_must_stay_inside(tmp_path, monkeypatch, rel):
    path = _manifest(tmp_path, monkeypatch, {"evil": _entry({rel: b"x"})})
    with pytest.raises(ValueError, match=f"{path}: corpus 'evil': file .* is not a "
                                         "relative path inside the corpus folder"):
        mf.load_manifest()


@pytest.mark.parametrize("field, value", [("path", "../up"), ("name", "../up"),
                                          ("name", "a/b")])
def test_manifest_folders_and_names_must_stay_inside(tmp_path, monkeypatch, field, value):
    name, entry = "evil", _entry({"a.txt": b"x"})
    if field == "name":
        name = value
    else:
        entry[field] = value
    _manifest(tmp_path, monkeypatch, {name: entry})
    with pytest.raises(ValueError, match="is not a (relative path inside|plain folder)"):
        mf.load_manifest()


def test_fetch_never_writes_outside_or_truncates_the_source(tmp_path, monkeypatch, dest):
    src = tmp_path / "src" / "evil"
    src.mkdir(parents=True)
    (src / "a.txt").write_bytes(b"precious")
    victim = tmp_path / "src" / "outside.txt"
    victim.write_bytes(b"keep me")
    for rel in ("../outside.txt", str(src / "a.txt")):
        _manifest(tmp_path, monkeypatch, {"evil": _entry({rel: b"other"})})
        assert main(["data", "fetch", "evil", "--from", str(tmp_path / "src")]) == 2
    assert (src / "a.txt").read_bytes() == b"precious"
    assert victim.read_bytes() == b"keep me"
    assert _tree(tmp_path / "src") == ["evil", "evil/a.txt", "outside.txt"]
    assert not dest.exists() or _tree(dest) == []


def test_sizes_are_compared_before_hashing(tmp_path, monkeypatch, dest, capsys):
    src = tmp_path / "src" / "evil"
    src.mkdir(parents=True)
    with open(src / "big.bin", "wb") as fh:
        fh.truncate(200 * 2 ** 20)  # 200 MiB, sparse
    _manifest(tmp_path, monkeypatch, {"evil": _entry({"big.bin": b"0123456789"})})
    t0 = time.perf_counter()
    assert main(["data", "fetch", "evil", "--from", str(tmp_path / "src")]) == 1
    assert time.perf_counter() - t0 < 1
    assert "big.bin: size 209715200, expected 10" in capsys.readouterr().err
    assert _tree(dest) == []


def _fake_download(monkeypatch, make_zip):
    import nltk

    def download(package, download_dir=None, **kwargs):
        folder = Path(download_dir) / "corpora"
        folder.mkdir(parents=True)
        make_zip(folder / f"{package}.zip")
        return True

    monkeypatch.setattr(nltk, "download", download)


@pytest.fixture
def removed(monkeypatch):
    """Every file (path -> size) present in a folder fetch removed, when removed."""
    seen = {}
    rmtree = fetch.shutil.rmtree

    def spy(path, *args, **kwargs):
        for p in Path(path).rglob("*"):
            if p.is_file():
                seen[str(p.relative_to(path))] = p.stat().st_size
        return rmtree(path, *args, **kwargs)

    monkeypatch.setattr(fetch.shutil, "rmtree", spy)
    return seen


def _nltk_corpus(tmp_path, monkeypatch, archive=None):
    files = {"ned.train": b"Jan N B-PER\n"}
    _manifest(tmp_path, monkeypatch, {"ner": _entry(
        files, path="ner", nltk={"subdir": "corpora/ner", "package": "ner"},
        archive=archive)})
    return files


def test_archive_is_verified_before_extraction(tmp_path, monkeypatch, dest, removed):
    good = io.BytesIO()
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("ner/ned.train", "Jan N B-PER\n")
    digest = hashlib.sha256(good.getvalue()).hexdigest()
    _nltk_corpus(tmp_path, monkeypatch, archive={
        "path": "nltk_data/corpora/ner.zip", "bytes": len(good.getvalue()),
        "sha256": digest})

    def other_zip(path):  # same files, another archive
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("ner/ned.train", "Jan N B-PER\n")

    _fake_download(monkeypatch, other_zip)
    with pytest.raises(mf.ChecksumError, match="ner.zip: the downloaded archive does not "
                                               "match the manifest"):
        fetch.fetch_corpus("ner")
    assert set(removed) == {"corpora/ner.zip"}  # nothing was unpacked
    assert _tree(dest) == []
    _fake_download(monkeypatch, lambda path: path.write_bytes(good.getvalue()))
    target, copied = fetch.fetch_corpus("ner")
    assert copied and (target / "ned.train").read_bytes() == b"Jan N B-PER\n"


def test_archive_members_are_capped_at_the_manifest_size(tmp_path, monkeypatch, dest,
                                                         removed, capsys):
    _nltk_corpus(tmp_path, monkeypatch)

    def bomb(path):
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("ner/ned.train", b"\0" * (50 * 2 ** 20))  # 50 MiB of zeros
            zf.writestr("ner/extra.bin", b"\0" * (50 * 2 ** 20))

    _fake_download(monkeypatch, bomb)
    assert main(["data", "fetch", "ner"]) == 1
    assert ("ned.train: size 52428800 in the archive, expected 12; nothing was unpacked"
            in capsys.readouterr().err)
    assert max(removed.values()) < 2 ** 20  # only the zip itself was ever on disk
    assert _tree(dest) == []


def test_a_damaged_zip_is_a_message(tmp_path, monkeypatch, dest, capsys):
    _nltk_corpus(tmp_path, monkeypatch)
    _fake_download(monkeypatch, lambda path: path.write_bytes(b"PK\x03\x04 not a zip"))
    assert main(["data", "fetch", "ner"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ner: ner.zip: not a readable zip archive (BadZipFile")
    assert _tree(dest) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_in_the_source_is_not_read(tmp_path, monkeypatch, dest, capsys):
    src = tmp_path / "src" / "evil"
    src.mkdir(parents=True)
    os.mkfifo(src / "a.txt")
    (src / "b.txt").write_bytes(b"y")
    _manifest(tmp_path, monkeypatch, {"evil": _entry({"a.txt": b"x", "b.txt": b"y"})})
    assert main(["data", "fetch", "evil", "--from", str(tmp_path / "src")]) == 1
    assert "a.txt: not a regular file (a FIFO)" in capsys.readouterr().err
    assert _tree(dest) == []
