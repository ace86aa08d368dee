"""DocBench Lens's dashboard (README.md). `scoring` is imported first: it sets numpy's BLAS to one thread,
which only works before numpy loads (scoring/__init__.py)."""

import scoring  # noqa: F401
