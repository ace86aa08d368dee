"""DocBench Lens scoring: loaders, XL-DocBench / DocVQA metrics, aggregation and reports.

Python plus rapidfuzz (edit distances, LCS), orjson (fast JSON reading and writing), numpy
(the slice tables, the gate) and scipy (stats.py); never imports streamlit, plotly, pandas
or pymupdf (tests/test_architecture.py).
"""

import os as _os

# numpy's BLAS (OpenBLAS) starts a thread per core at the first matrix product and keeps them spinning after
# it. Our products are small (a bootstrap's counts times its sums, the sign flips' table) and the work that
# matters already runs on threads of our own (the per-slice table) or in processes (the finder, the readers):
# BLAS's threads made a Compare at 20,000 questions no faster and cost 0.6 CPU-s more of it (docs/performance.md).
# One BLAS thread unless the user says otherwise; read when numpy loads, so it is set here, before any of our
# modules imports numpy (dashboard/__init__.py imports this package first for the same reason). Only OpenBLAS's
# own setting (numpy's and scipy's wheels): OMP_NUM_THREADS would also reach the programs we start (Tesseract).
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
