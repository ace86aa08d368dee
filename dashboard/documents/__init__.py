"""The documents layer: the one home of PDF access (pdf.py: the lock, open, page count, page text,
the load check), OCR of pages without a text layer (ocr.py), the page-text model both return
(pagetext.py) and the lock with what may be done under it (guard.py). Used by the workspace, the
evidence, the overview and the report alike; it imports only dashboard.core. No streamlit here."""
