"""Docs, README, examples, benchmarks and the package's docstrings and comments speak
to users about the product as it is.

No issue numbers, work-session or "stop" numbers, branch names, workspace paths,
people or roles of the development process, no narration of how a figure was made or
what it was before, and no talk of releases (there has been none). A figure's history
belongs in CHANGELOG.md and git; CHANGELOG.md is the one page that narrates, and it
keeps an "Unreleased" section (Keep a Changelog).

Scanned: README.md and docs/**/*.md (every line, code blocks included: a command on
a page is read by users too), the generated defaults page, and the docstrings (ast)
and comments (tokenize) of structsvm/**/*.py, examples/*.py and benchmarks/*.py.
"""
import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# (what it is, pattern); matched case-insensitively across line breaks
RULES = [
    ("issue number", r"\b(?:issues?|tickets?|PRs?|pull requests?)\s*#?\d+\b"),
    ("issue number", r"(?<![\w&/.)\]#`'\"-])#\d{1,5}\b(?![\w.])"),
    ("stop number", r"\bstops?[ -]\d+\b|\bstop \d+'s\b"),
    ("work session", r"\b(?:this|that|the previous|previous|the last|last|the next|next|"
                     r"earlier|later|other|developer|helper|review|coding|work)\s+"
                     r"sessions?\b|\bsession(?:'s)?\s+\d+\b|\b(?:this|that|previous)\s+"
                     r"session's\b"),
    ("work wave", r"\b(?:this|that|the first|first|second|the second|last|the last|"
                  r"next|previous)\s+wave(?:'s)?\b"),
    ("branch", r"\bbranch(?:es)?\s+(?:[`'\"][\w./-]+[`'\"]|(?:main|master)\b|"
               r"[\w.]+[-/][\w./-]+)|\b(?:in|on)\s+(?:this|that)\s+branch\b|"
               r"\bon\s+branch\b|\b(?:main|master|feature|experiment)\s+branch\b|"
               r"\bthis branch's\b|[`'\"][\w./-]+[`'\"]\s+branch\b|"
               r"\bworktrees?\b|"
               r"\brebased?\b|\b(?:shared|another engineer's)\s+working\s+tree\b"),
    ("merge", r"\bmerged?\s+(?:in)?to\s+[`'\"]?(?:main|master)\b|"
              r"\b(?:after|before|since|until)\s+(?:the\s+)?merge\b|\bthe merge of\b|"
              r"\bmerged\s+(?:branch|PR|pull request)\b|\bwas merged\b(?!\s+into)"),
    ("workspace path", r"\.\./shared\b|(?<![\w.])/work/|\bshared/data\b|\bwt-[\w-]+\b"),
    ("person or role", r"\bthe lead\b(?!\s+(?:shrinks|grows|narrows|widens|of\b|"
                       r"is\b))|\breviewers?\b|\bdeveloper session\b|"
                       r"\bhelper session\b|\banother engineer(?:'s)?\b|"
                       r"\bthe maintainers? asked\b|\bas requested\b"),
    ("narration of a figure", r"\bre-?run\s+at\b|\bre-?ran\b|\bre-?measured\b|"
                              r"\bat commit\b|\bcommit\s+[0-9a-f]{7,40}\b|"
                              r"\bafter the faster\b|\bwas\s+\d+(?:\.\d+)?\s*x\b|"
                              r"\bbefore the\s+[^.\n]{1,40}?\bchange\b|"
                              r"\(was\s|\bnow\b[^.\n]{0,60}\(was\b|"
                              r"\buntil (?:this|that|the last) (?:session|stop|wave)\b|"
                              r"\b(?:the\s+)?(?:old|previous|former)\s+defaults?\b|"
                              r"\bused to be\b|\buncommitted\b|\bearlier runs?\b|"
                              r"\bthe same (?:day|afternoon|morning|evening|hour)\b|"
                              r"\bwhen the default \w+ was\b"),
    ("commit hash", r"(?<![\w/#.-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}"
                    r"(?![\w-])"),
    ("release", r"\b(?:since|until|as of|before|after|from|in)\s+(?:v|version\s+|"
                r"release\s+)?0\.\d+(?:\.\d+)?(?![\d.])(?!\s*(?:s\b|%|x\b|×|ms\b|"
                r"seconds?|of\b|and\b|or\b|to\b|\d|[-–,)/·*]))|"
                r"\b(?:version|release|v)\s?0\.\d+\b|\b0\.\d+\s+release\b|"
                r"\b(?:a|the|this|that|next|first|future|upcoming|every|each|any|later|"
                r"previous)\s+releases?\b|\breleases?\s+(?:v?\d|notes)|"
                r"\breleased\s+(?:in|as|with|on)\b"),
]
PATTERN = re.compile("|".join(f"(?P<r{i}>{pat})" for i, (_, pat) in enumerate(RULES)),
                     re.I)


def findings_in(text, where):
    """``where(offset)`` names the line of an offset of ``text``."""
    out = []
    for m in PATTERN.finditer(text):
        kind = RULES[int(m.lastgroup[1:])][0]
        line = text[text.rfind("\n", 0, m.start()) + 1:]
        line = line.split("\n", 1)[0].strip()
        out.append(f"{where(m.start())}: {kind}: {' '.join(m.group().split())!r}\n"
                   f"    > {line[:160]}")
    return list(dict.fromkeys(out))  # a repeat on one line is one finding


def _page_findings(path):
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    return findings_in(text, lambda pos: f"{rel}:{text.count(chr(10), 0, pos) + 1}")


def _python_texts(path):
    """(first line, text) of every docstring and comment of a Python file."""
    source = path.read_text(encoding="utf-8")
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and \
                    isinstance(body[0].value, ast.Constant) and \
                    isinstance(body[0].value.value, str):
                out.append((body[0].value.lineno, body[0].value.value))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string.lstrip("#")))
    return out


def _python_findings(path):
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for first, text in _python_texts(path):
        out += findings_in(text, lambda pos, first=first, text=text:
                           f"{rel}:{first + text.count(chr(10), 0, pos)}")
    return out


def _report(findings):
    return (f"{len(findings)} place(s) speak of the development, not the product "
            "(history goes to CHANGELOG.md):\n" + "\n".join(findings))


PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
SOURCES = sorted((ROOT / "structsvm").rglob("*.py")) + \
    sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_pages_speak_to_users(path):
    findings = _page_findings(path)
    assert not findings, _report(findings)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docstrings_and_comments_speak_to_users(path):
    findings = _python_findings(path)
    assert not findings, _report(findings)


def test_generated_defaults_page_speaks_to_users():
    from structsvm.estimator._defaults import defaults_markdown

    text = defaults_markdown()
    findings = findings_in(text, lambda pos: f"defaults_markdown():{pos}")
    assert not findings, _report(findings)


def test_changelog_keeps_an_unreleased_section():
    path = ROOT / "CHANGELOG.md"
    assert path.is_file(), "CHANGELOG.md is missing at the repository root"
    text = path.read_text(encoding="utf-8")
    h2 = re.findall(r"^##\s+(.+?)\s*$", text, re.M)
    assert h2 and re.fullmatch(r"\[?Unreleased\]?", h2[0], re.I), (
        f"CHANGELOG.md's first section must be 'Unreleased' (Keep a Changelog); "
        f"sections: {h2}")
    kinds = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    h3 = re.findall(r"^###\s+(.+?)\s*$", text, re.M)
    assert set(h3) <= kinds, f"CHANGELOG.md subsections must be among {sorted(kinds)}"


# ------------------------------------------------------------ the rules themselves
FLAGGED = [
    "Fixed in issue 13.", "See issue #13 for details.", "as discussed in #13, the",
    "Stop 18's layout", "the stop-18 layout", "measured in this session",
    "until this wave's last session", "branch main", "merged into main",
    "on branch docs-defaults", "NLTK_DATA=../shared/data/nltk_data",
    "data in /work/shared/data", "as the lead asked", "a reviewer noticed",
    "re-run at commit abc1234", "re-measured on a quiet machine",
    "after the faster feature strings", "it was 0.26x", "0.23 (was 0.26)",
    "now 1.2 s (was 3.4 s)", "before the sparse change", "since 0.2",
    "moved in 0.1", "the 0.2 release", "the old default", "kept for a release",
    "in this branch", "after the merge of the learners", "at f9ac1b7 (before both",
    "An earlier run at load 9-11", "Two earlier runs the same hour",
    "commit 9dcb550 of the `parsing` branch",
    "another engineer's uncommitted learner edits",
]
NOT_FLAGGED = [
    "`structsvm data fetch conll2000` downloads it", "$STRUCTSVM_DATA points there",
    "to issue a warning", "the decoder issues one call", "stop when the gap is small",
    "the cache merges the two least used into one", "two outputs merged into one",
    "a `--sessions` option: simulated users per query", "n_sessions : int",
    "the main loop", "releases the GIL", "C in 0.1, 1 and 10", "in 0.5 s",
    "tol 0.1 and 0.05", "see benchmarks.md#sequences-chunking-conll-2000",
    "color #fff", "the first 100 rounds", "step 3 of the algorithm",
    "Release the workers.", "the branch it belongs to", "the two are merged into one",
    "columns sorted and merged", "rows of merged slots", "the lead shrinks to 1.08",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the colour #a0b1c2", "1e-3 and 5e-4",
]


@pytest.mark.parametrize("text", FLAGGED)
def test_rules_flag_development_talk(text):
    assert findings_in(text, str), text


@pytest.mark.parametrize("text", NOT_FLAGGED)
def test_rules_pass_product_talk(text):
    assert not findings_in(text, str), findings_in(text, str)
