"""Every fenced sql, python and sh block of README.md runs as written, in order, on a fresh warehouse.

A reader follows the README from the top, in a clone of the repository: the set-up block makes
``./warehouse``, the tour adds to it, and later blocks use what the blocks before them made. The
runner (:mod:`tests.support.doc_blocks`) is shared with the pages of ``docs/``
(``tests/test_docs.py``); a block that fails names its line, and the output the README shows is
compared.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.doc_blocks import (
    LANGUAGES,
    ROOT,
    BlockFailed,
    clone_for_reader,
    page_blocks,
    run_blocks,
    transcript,
)

README = ROOT / "README.md"
MAX_LINES = 300  # the front page: what it is, install, the tour, where to go next


def test_every_readme_block_runs_in_order(tmp_path: Path) -> None:
    clone = clone_for_reader(tmp_path)
    ran = run_blocks(page_blocks(README.read_text()), clone)
    assert {b.language for b in ran} >= {"sql", "sh"}
    assert (clone / "warehouse" / "catalog.db").is_file()


def _statements(sql: str) -> list[str]:
    """The statements of SQL text, comments dropped and white space made single spaces."""
    text = "\n".join(re.sub(r"--.*$", "", line) for line in sql.splitlines())
    return [" ".join(s.split()) for s in text.split(";") if s.strip()]


def test_the_quickstart_script_is_the_tour() -> None:
    """``sql/quickstart.sql`` is what the README calls it: the tour's statements, as a script."""
    tour = next(b for b in page_blocks(README.read_text()) if b.language == "sql")
    _, typed = transcript(tour)
    script = (ROOT / "sql" / "quickstart.sql").read_text()
    assert _statements(script) == _statements("\n".join(s.sql for s in typed))
    assert any("shop.orders" in s for s in _statements(script))


def test_the_readme_is_a_short_front_page() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < MAX_LINES, f"README.md has {len(lines)} lines: move detail into docs/"


def test_the_blocks_not_run_are_few_and_named() -> None:
    skipped = [b for b in page_blocks(README.read_text()) if b.not_run is not None]
    reasons = [b.not_run for b in skipped]
    assert len(skipped) <= 2, reasons
    assert all(re.search(r"install|test suite|Spark|server", reason or "") for reason in reasons), reasons


def test_a_failing_block_names_its_line(tmp_path: Path) -> None:
    text = "# t\n\n```python\nx = 1\nprint(x + 1)  # 3\n```\n"
    with pytest.raises(BlockFailed, match=r"README.md:5: printed '2', the page shows '3'"):
        run_blocks(page_blocks(text), tmp_path)
    text = "```sh\ntrue\niceduck wh -c 'SELECT nope FROM nowhere.t;'\n```\n"
    with pytest.raises(BlockFailed, match=r"docs/x.md:2: sh block exited 1"):
        run_blocks(page_blocks(text, "docs/x.md"), tmp_path)


def test_transcript_output_is_compared(tmp_path: Path) -> None:
    text = "```sql\n$ iceduck wh --csv\niceduck> SELECT 1 + 1\n    ...> AS two;\ntwo\n3\n```\n"
    with pytest.raises(BlockFailed, match=r"README.md:3: the output shown after this statement"):
        run_blocks(page_blocks(text), tmp_path)
    run_blocks(page_blocks(text.replace("two\n3", "two\n2")), tmp_path)


def test_unmarked_fences_in_other_languages_are_refused() -> None:
    with pytest.raises(BlockFailed, match=r"README.md:3: a fenced block in 'text'"):
        page_blocks("a\n\n```text\nhello\n```\n")
    assert page_blocks("<!-- not run: installs packages -->\n```sh\npip install x\n```\n")[0].not_run == (
        "installs packages"
    )
    assert set(LANGUAGES) == {"sql", "python", "sh"}
