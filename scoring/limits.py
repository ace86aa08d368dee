"""Every cap on reading a file a harness or a user left, in one place (issue 35: bounded by
construction). Each is applied WHILE reading, never after: a reader stops at the cap, keeps what it
read before it and says what was kept and what was not (file, line or sheet row). docs/reading.md
("Caps on every dimension") lists them.

The caps are far above what a real benchmark or harness writes (VLMEvalKit's largest document
table has about 5,400 rows; an lmms-eval samples line without images is a few KB) and far below what
would take a server's memory: each is sized so that what it lets through costs at most a few
hundred MB."""

from __future__ import annotations

__all__ = [
    "EXCEL_MAX_COLUMNS", "EXCEL_MAX_ROWS", "MAX_TABLE_ROWS", "MAX_TABLE_CELLS", "MAX_SHEET_ROWS",
    "XLSX_MAX_PART_BYTES", "XLSX_MAX_META_BYTES", "ZIP_MAX_RATIO", "ZIP_RATIO_FROM_BYTES", "ZIP_MAX_ENTRIES",
    "XLSX_MAX_SHARED_STRINGS", "XLSX_MAX_SHARED_CHARS", "XLSX_MAX_ROW_XML", "XLSX_CHUNK", "XLSX_MAX_SHARED_FORMULAS",
    "TABLE_MAX_REMARKS", "TABLE_MAX_LINE", "LINE_SKIP_CHUNK",
    "JSON_TABLE_MAX_BYTES", "JSONL_HUGE_LINE", "JSONL_MAX_LINE", "LMMS_MAX_LINE", "LONGDOCURL_MAX_LINE",
    "HARNESS_MAX_LINES", "RESULTS_MAX_BYTES", "DOCUMENT_MAX_BYTES", "WIDE_TEXT_MAX_BYTES",
    "LITERAL_MAX_CHARS", "LITERAL_MAX_DEPTH", "LITERAL_MAX_ITEMS", "WALK_MAX_DEPTH", "WALK_MAX_ENTRIES",
    "WALK_PROGRESS_EVERY",
]

# --- tables (.xlsx, .csv, .tsv, .json tables: scoring/formats/tables.py) ----------------------------
EXCEL_MAX_COLUMNS = 16_384  # column XFD: a cell reference beyond it is named and not read (no padding up to it)
EXCEL_MAX_ROWS = 1_048_576  # Excel's last row: a row numbered beyond it is named (rows are never padded)
MAX_TABLE_ROWS = 2_000_000  # data rows kept of one table; the rest is named, not read
MAX_TABLE_CELLS = 16_000_000  # data rows x header columns kept (2,000,000 rows of 8 columns)
MAX_SHEET_ROWS = 4_000_000  # <row> elements looked at, blank ones included, before a sheet is cut
XLSX_MAX_PART_BYTES = 1 << 30  # a workbook part (sheet, shared strings) declaring more inflated bytes is not read
XLSX_MAX_META_BYTES = 16 << 20  # workbook.xml, its relationships and styles.xml: parsed whole, so smaller
ZIP_MAX_RATIO = 100  # inflated / stored size of a part; above it (and ZIP_RATIO_FROM_BYTES) a zip bomb
ZIP_RATIO_FROM_BYTES = 8 << 20  # parts inflating to less than this are not held to the ratio
ZIP_MAX_ENTRIES = 10_000  # entries of a workbook's zip directory (xlsxwriter writes about ten)
XLSX_MAX_SHARED_STRINGS = 2_000_000  # shared strings kept; a cell naming a later one cuts the table there
XLSX_MAX_SHARED_CHARS = 128 << 20  # characters of shared-string text kept (the same cut)
XLSX_MAX_ROW_XML = 64 << 20  # the XML of one <row> (or one <si>): a longer one cuts the sheet there
XLSX_CHUNK = 4 << 20  # inflated bytes read from a part at a time
XLSX_MAX_SHARED_FORMULAS = 10_000  # shared formulas whose text a note quotes (the rest: "=")
TABLE_MAX_REMARKS = 200  # remarks of one kind kept per table (cells not read...); the rest counted in one
TABLE_MAX_LINE = 64 << 20  # one physical line of a .csv/.tsv table
JSON_TABLE_MAX_BYTES = 256 << 20  # a .json table (VLMEvalKit's PRED_FORMAT=json) is parsed whole, so smaller

# --- lines (JSONL gold/predictions: scoring/loaders.py; harness lines: scoring/formats/) -------------
JSONL_HUGE_LINE = 1 << 20  # a JSONL line this long loads, with a warning
JSONL_MAX_LINE = 64 << 20  # a JSONL line longer than this is skipped (read past, never held)
LINE_SKIP_CHUNK = 1 << 20  # bytes read at a time while reading past an over-long line
LMMS_MAX_LINE = 50_000_000  # an lmms-eval samples line (v0.7.1 on: data-URI images in `input_media`)
LONGDOCURL_MAX_LINE = 16 << 20  # a LongDocURL results line (no images: a few KB)
HARNESS_MAX_LINES = 2_000_000  # lines read of one lmms-eval samples or LongDocURL results file
RESULTS_MAX_BYTES = 64 << 20  # an lmms-eval results file (a few KB) is parsed whole, so smaller
DOCUMENT_MAX_BYTES = 512 << 20  # a JSON document or CSV score file read whole (a .json list, a pretty-printed .jsonl)
WIDE_TEXT_MAX_BYTES = 256 << 20  # a UTF-16/UTF-32 text file is decoded whole, so smaller

# --- Python literals in answers (lmms-eval `target`, VLMEvalKit list cells, MMLongBench-Doc) ---------
LITERAL_MAX_CHARS = 100_000  # longer text is not parsed (ast.literal_eval needs ~400 bytes a character)
LITERAL_MAX_DEPTH = 100  # brackets nested deeper than this are not parsed
LITERAL_MAX_ITEMS = 10_000  # items (commas outside strings) of a literal parsed

# --- folders (scoring/formats/base.py walk) ------------------------------------------------------------
WALK_MAX_DEPTH = 6  # a harness folder is at most output_path/model/eval_id/file deep; more is not walked
WALK_MAX_ENTRIES = 100_000  # files, folders and links listed under one folder given; the rest is named, not read
WALK_PROGRESS_EVERY = 5_000  # entries between two progress reports of a walk
