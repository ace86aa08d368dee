"""Uploads are bounded (issue 17, item 5): copied to the staged file in chunks while hashed (never
`getvalue()` into more copies), staged per session and removed when no longer used, and a name with
a NUL byte, an over-long name or an unwritable cache folder gives a message, not an exception."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from dashboard.core import paths
from dashboard.core.paths import UploadError, prune_session_uploads, stage_upload, sweep_uploads, upload_name
from dashboard.data.workspace import run_name
from scoring.loaders import load_predictions

LINE = b'{"question_id": "q1", "prediction": "x"}\n'


class Upload(io.BytesIO):
    """Like Streamlit's UploadedFile (a BytesIO), but refuses to be copied whole."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name
        self.reads: list[int] = []

    def getvalue(self):  # noqa: D102
        raise AssertionError("the upload was copied whole (getvalue)")

    def read(self, size=-1):  # noqa: D102
        self.reads.append(size)
        return super().read(size)


def test_uploads_are_copied_in_chunks_and_stay_readable(tmp_path):
    data = LINE * 100_000  # 4.2 MB: several chunks
    up = Upload(data, "run.jsonl")
    up.read(10)  # a widget read before: staging starts from the beginning anyway
    path = stage_upload(up.name, up, tmp_path)
    assert path.read_bytes() == data
    assert all(0 < n <= paths.UPLOAD_CHUNK for n in up.reads[1:]) and len(up.reads) > 3
    assert up.tell() == 0  # left rewound for whoever reads it next
    assert stage_upload("run.jsonl", data, tmp_path) == path  # bytes and streams agree on the digest
    assert not list(tmp_path.rglob(".part-*"))


def test_a_nul_byte_in_the_name_is_said_not_raised(tmp_path):
    name, note = upload_name("run\x00.jsonl")
    assert name == "run.jsonl" and "NUL" in note
    path = stage_upload("run\x00.jsonl", Upload(LINE, "x"), tmp_path)
    assert path.name == "run.jsonl" and load_predictions(path).items


def test_a_long_name_keeps_its_extension_and_parses(tmp_path):
    long = "r" * 300 + ".jsonl"
    name, note = upload_name(long)
    assert len(name) == paths.MAX_UPLOAD_NAME and name.endswith(".jsonl") and "shortened" in note
    path = stage_upload(long, Upload(LINE, long), tmp_path)
    assert path.suffix == ".jsonl" and run_name(path) == "r" * (paths.MAX_UPLOAD_NAME - 6)
    assert [p.qid for p in load_predictions(path).items] == ["q1"]
    assert upload_name("a" * 250)[0] == "a" * 200  # no extension: simply cut
    assert upload_name("short.csv") == ("short.csv", "")


def test_an_unwritable_cache_folder_is_a_message(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UploadError, match="cannot be written") as err:
        stage_upload("run.jsonl", Upload(LINE, "run.jsonl"), blocker / "uploads" / ("a" * 32))
    assert "LENS_CACHE_DIR" in str(err.value) and "run.jsonl" in str(err.value)
    if os.geteuid() != 0:  # root writes anywhere; the blocked parent above covers it
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(UploadError):
            stage_upload("run.jsonl", LINE, ro / "s")


def _age(folder: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(folder, (t, t))


def test_sweep_removes_idle_and_closed_sessions_only(tmp_path):
    own, open_, closed, idle, fresh_closed = (tmp_path / (c * 32) for c in "abcde")
    for folder in (own, open_, closed, idle, fresh_closed):
        stage_upload("run.jsonl", LINE, folder)
    _age(own, 48 * 3600)  # the sweeping session's own folder is kept however old
    _age(open_, 3600)  # open session, an hour idle: kept
    _age(closed, (paths.UPLOAD_CLOSED_MINUTES + 1) * 60)  # closed, past the grace: removed
    _age(idle, (paths.UPLOAD_IDLE_HOURS + 1) * 3600)  # nobody said it closed, but idle for a day: removed
    (tmp_path / "not-a-session").mkdir()
    alive = {own.name, open_.name, idle.name}.__contains__
    assert sweep_uploads(keep=own.name, alive=alive, root=tmp_path) == 2
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {own.name, open_.name, fresh_closed.name, "not-a-session"}  # fresh_closed: within the grace


def test_sweep_without_a_folder_or_runtime_does_nothing(tmp_path):
    assert sweep_uploads(root=tmp_path / "missing") == 0
    stage_upload("run.jsonl", LINE, tmp_path / ("a" * 32))
    assert sweep_uploads(root=tmp_path) == 0 and (tmp_path / ("a" * 32)).is_dir()


def test_files_taken_out_of_the_upload_boxes_leave_the_disk(tmp_path):
    folder = tmp_path / ("a" * 32)
    a = stage_upload("a.jsonl", LINE, folder)
    b = stage_upload("b.jsonl", LINE + LINE, folder)
    prune_session_uploads(folder, [b])
    assert not a.exists() and b.read_bytes() == LINE + LINE
    prune_session_uploads(folder, [])
    assert list(folder.iterdir()) == []
