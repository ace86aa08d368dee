"""A worker process never runs its parent's main script (scoring/forkserver_start.py): Streamlit makes
each script run's module `__main__`, in any session's thread, so a pool started beside a script run was
told to import dashboard/app.py -- and each worker ran the app. Here `__main__` is such a script (it
leaves a file when run) while a pool of the forkserver starts, outside `bare_main`."""

from __future__ import annotations

import os
import sys
import types
from concurrent.futures import ProcessPoolExecutor

from scoring import workers


def test_a_worker_started_while_main_is_a_script_does_not_run_it(tmp_path, monkeypatch):
    ran = tmp_path / "the script ran"
    script = tmp_path / "app_script.py"
    script.write_text(f"open({str(ran)!r}, 'w').close()\n", encoding="utf-8")
    module = types.ModuleType("__main__")
    module.__file__ = str(script)  # what Streamlit's script run puts there: a file, no spec
    ctx = workers.forkserver_context()
    monkeypatch.setitem(sys.modules, "__main__", module)
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        pid = pool.submit(os.getpid).result(timeout=120)  # hang guard: a worker starts in about a second
    monkeypatch.undo()
    assert pid != os.getpid()
    assert not ran.exists(), "a worker ran the parent's main script"


def test_nor_a_main_module_named_by_its_spec(tmp_path, monkeypatch):
    ran = tmp_path / "the module ran"
    (tmp_path / "lens_fake_main.py").write_text(f"open({str(ran)!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = types.ModuleType("__main__")
    module.__spec__ = types.SimpleNamespace(name="lens_fake_main")  # `python -m lens_fake_main`
    ctx = workers.forkserver_context()
    monkeypatch.setitem(sys.modules, "__main__", module)
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        pool.submit(os.getpid).result(timeout=120)
    monkeypatch.undo()
    assert not ran.exists(), "a worker imported the parent's main module"
