"""``iceduck --help`` lists the subcommands, which :func:`iceduck.cli.main` dispatches
before argparse sees them."""

from __future__ import annotations

import contextlib
import io

import pytest

from iceduck.cli import main


def test_help_lists_serve() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert "subcommands:" in out.getvalue()
    assert "iceduck serve [WAREHOUSE]" in out.getvalue()
    assert "Iceberg REST catalog" in out.getvalue()
