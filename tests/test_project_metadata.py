"""LICENSE, CITATION.cff and pyproject.toml agree with each other and the package."""
import re
from pathlib import Path

import pytest

import structsvm

ROOT = Path(__file__).resolve().parents[1]
yaml = pytest.importorskip("yaml", reason="PyYAML comes with the test extra (mkdocs)")


def _pyproject(key):
    """A string value of pyproject.toml's [project] table (``license`` as its text)."""
    text = (ROOT / "pyproject.toml").read_text()
    project = text[text.index("[project]"):]
    return re.search(rf'^{key}\s*=\s*(?:{{\s*text\s*=\s*)?"([^"]+)"', project,
                     re.MULTILINE).group(1)


def test_license_file_is_the_declared_license():
    assert _pyproject("license") == "BSD-3-Clause"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    # the three clauses, and no fourth (advertising) clause
    assert "Neither the name of the copyright holder" in text
    assert "advertising" not in text.lower()


def test_citation_file_names_this_version_and_license():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == structsvm.__version__ == _pyproject("version")
    assert cff["license"] == "BSD-3-Clause"
    assert cff["authors"] and cff["title"].startswith("structsvm")
    for ref in cff.get("references", []):
        assert ref["authors"] and ref["year"] and ref["title"]
