"""The reference site builds strictly and the README's links into it land on a page and a heading that exist.

mkdocs checks the links between docs pages (and their anchors) itself in strict mode; the README is not part of
the site, so its relative links are checked here with the same heading slugs mkdocs gives.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]\n]*\]\((?P<target>(?!https?:|mailto:)[^)#\s]*)(?:#(?P<anchor>[^)\s]+))?\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(markdown: str) -> set[str]:
    """The heading ids mkdocs (Python-Markdown's toc) gives a page."""
    from markdown.extensions.toc import slugify, unique

    seen: set[str] = set()
    ids = set()
    for title in HEADING.findall(FENCE.sub("", markdown)):
        plain = re.sub(r"`([^`]*)`", r"\1", title)
        ids.add(unique(slugify(plain, "-"), seen))
    return ids


def broken_links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    problems = []
    for m in LINK.finditer(FENCE.sub("", text)):
        target = (path.parent / m.group("target")) if m.group("target") else path
        if not target.exists():
            problems.append(f"{path.name}: {m.group(0)}: no such file")
        elif (
            m.group("anchor")
            and target.suffix == ".md"
            and m.group("anchor") not in anchors(target.read_text(encoding="utf-8"))
        ):
            problems.append(f"{path.name}: {m.group(0)}: no such heading in {target.name}")
    return problems


def test_the_readme_links_resolve() -> None:
    pytest.importorskip("markdown", reason="the docs extra (pip install -e '.[docs]') is not installed")
    assert not broken_links(ROOT / "README.md")


def test_the_link_check_catches_a_broken_anchor(tmp_path: Path) -> None:
    pytest.importorskip("markdown", reason="the docs extra (pip install -e '.[docs]') is not installed")
    (tmp_path / "page.md").write_text("# Title\n\n## Run on a GPU (`-T x=y`)\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](page.md#run-on-a-gpu-t-xy) [bad](page.md#run-on-gpu) [gone](other.md)\n", encoding="utf-8"
    )
    assert broken_links(readme) == [
        "README.md: [bad](page.md#run-on-gpu): no such heading in page.md",
        "README.md: [gone](other.md): no such file",
    ]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict` (as CI runs it): a broken link or anchor, or a page outside the nav, fails."""
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]') is not installed")
    pytest.importorskip("material", reason="the docs extra (pip install -e '.[docs]') is not installed")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    proc = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "koblex" / "index.html").exists()
    (tmp_path / "docs" / "grid.md").write_text("# Grid\n\n[x](koblex.md#no-such-heading)\n", encoding="utf-8")
    proc = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "no-such-heading" in proc.stderr
