"""The ``iceduck`` SQL shell: REPL (:mod:`.repl`), batch runs (:mod:`.batch`), dot commands,
completion and output modes. The command line is :mod:`iceduck.cli`."""
