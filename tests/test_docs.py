"""Every page of ``docs/`` runs on its own: each in a fresh clone with a fresh warehouse.

A reader opens any page first, so a page creates what it uses (its namespace, its tables, a
server it talks to) and never relies on the README's tour or on another page having run. Each
page is its own test, in a clone of its own, so the pages pass in any order and alone
(``pytest tests/test_docs.py -k catalogs``). The runner is the README's
(:mod:`tests.support.doc_blocks`): blocks in order, output compared, failures naming the page's
line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.doc_blocks import ROOT, clone_for_reader, page_blocks, run_blocks

DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if p.name != "README.md")
NOT_RUN_REASON = re.compile(r"install|test suite|Spark|server|JVM|Java|AWS|cluster")


def _relative(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_page_runs_on_its_own(page: Path, tmp_path: Path, object_store_restored: None) -> None:
    """A page's object-store settings are the process's; they are put back after it, so the
    next page starts from none, as a reader's new process would."""
    clone = clone_for_reader(tmp_path)
    run_blocks(page_blocks(page.read_text(), _relative(page)), clone)


def test_the_index_and_the_readme_link_every_page() -> None:
    index = (DOCS / "README.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for page in PAGES:
        assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"
        assert f"](docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


def test_every_relative_link_resolves() -> None:
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # an address on the web
            assert (page.parent / target).exists(), f"{_relative(page)} links {target}, which does not exist"


def test_the_blocks_not_run_are_few_and_named() -> None:
    skipped = [b for page in PAGES for b in page_blocks(page.read_text(), _relative(page)) if b.not_run]
    reasons = [f"{b.page}:{b.line}: {b.not_run}" for b in skipped]
    assert len(skipped) <= 12, reasons
    assert all(NOT_RUN_REASON.search(b.not_run or "") for b in skipped), reasons
