"""DocBench Lens scoring: loaders, XL-DocBench / DocVQA metrics, aggregation and reports.

Python plus rapidfuzz (edit distances, LCS), orjson (fast JSON reading and writing), numpy
(the slice tables, the gate) and scipy (stats.py); never imports streamlit, plotly, pandas
or pymupdf (tests/test_architecture.py).
"""

__version__ = "0.1.0"
