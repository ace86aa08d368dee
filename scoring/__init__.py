"""DocBench Lens scoring: loaders, XL-DocBench / DocVQA metrics, aggregation and reports.

Pure Python plus rapidfuzz; never imports streamlit, plotly or pymupdf.
"""

__version__ = "0.1.0"
