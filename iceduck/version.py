"""The release of iceduck, in one place: the package, the shell banner and every snapshot summary
(``engine-version``) read it, and ``pyproject.toml`` takes it as the distribution's version.

It is a leaf module so that any layer (``txn/`` writes it into snapshot summaries) can import it
without importing the ``iceduck`` package root, which pulls in the connection and the session.
"""

__version__ = "0.1.0"
