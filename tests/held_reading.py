"""`python -m streamlit` with every whole-document reading held back (tests only): the Evidence
viewer's background reading (dashboard/documents/ocr.py `read_whole`, run by `ocr.background`) waits
until the file named by LENS_TEST_RELEASE exists, so a browser test can act while a reading is
surely running and then let it finish -- a state, not a moment. Run as
`python tests/held_reading.py run dashboard/app.py ...` (browser_kit.serve's `launcher`)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dashboard.documents import ocr

HANG = 120.0  # a hang guard: a test that never releases the reading still ends

_read_whole = ocr.read_whole


def held(read, path, progress=None):
    release = Path(os.environ["LENS_TEST_RELEASE"])
    if progress is not None:
        progress(0, 1)
    deadline = time.monotonic() + HANG
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return _read_whole(read, path, progress)


ocr.read_whole = held

if __name__ == "__main__":
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())
