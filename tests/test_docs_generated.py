"""The parts of the documentation generated at build time: the API index's module
table and the command line's help on its page."""
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("mkdocs", reason="the docs tools come with the test extra")


def _hook(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" /
                                                  f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_table_lists_every_public_module_with_its_page():
    hook = _hook("api_table")
    table = hook.api_table(ROOT / "docs")
    for name in hook.public_modules():
        row = next(line for line in table.splitlines() if f"[`{name}`]" in line)
        page = row.split("](", 1)[1].split(")", 1)[0]
        assert (ROOT / "docs" / "api" / page).is_file(), row
    assert "structsvm.structures.sequence" in hook.public_modules()


def test_api_table_refuses_a_module_without_a_page(tmp_path):
    hook = _hook("api_table")
    shutil.copytree(ROOT / "docs" / "api", tmp_path / "api")
    (tmp_path / "api" / "limits.md").unlink()
    with pytest.raises(ValueError, match="structsvm.limits"):
        hook.api_table(tmp_path)


def test_command_line_page_shows_the_commands_own_help():
    hook = _hook("cli_help")

    class Page:  # what the hook reads of mkdocs' page
        pass

    out = hook.on_page_markdown("a\n<!-- help: structsvm learn -->\nb", Page(), {}, [])
    assert "--svmstruct-c" in out and "defaults when" in out
    assert out.startswith("a\n```text\nusage: structsvm learn")
    page = (ROOT / "docs" / "command_line.md").read_text()
    assert "<!-- help: structsvm learn -->" in page
