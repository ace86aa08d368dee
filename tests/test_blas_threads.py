"""numpy's BLAS runs on one thread in our processes unless the user says otherwise (scoring/__init__.py): its
threads spun on the other core after every small product (a Compare at 20,000 questions: no faster, 0.6 CPU-s
more). The setting only works before numpy loads, so each entry point must reach `scoring` first."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the most threads of the OpenBLAS builds numpy and scipy loaded (their wheels each ship one, as scipy_openblas)
PROBE = """
import ctypes
{imports}
import numpy
import scipy.linalg
numpy.ones((64, 64)) @ numpy.ones(64)
scipy.linalg.solve(numpy.eye(3), numpy.ones(3))
libs = sorted({{line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()}})
assert libs, "numpy loaded no OpenBLAS"
counts = []
for path in libs:
    lib = ctypes.CDLL(path)
    for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads64_",
                 "openblas_get_num_threads"):
        if hasattr(lib, name):
            counts.append(getattr(lib, name)())
            break
assert len(counts) == len(libs) == 2, f"a thread count for each of numpy's and scipy's BLAS: {{libs}}, {{counts}}"
print(max(counts))
"""


def threads(imports: str, **env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", PROBE.format(imports=imports)], cwd=ROOT, env={**clean, **env},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_numpy_blas_runs_on_one_thread_once_scoring_or_the_dashboard_is_imported():
    assert threads("") > 1 or os.cpu_count() == 1  # numpy alone: a thread per core
    assert threads("import scoring") == 1
    assert threads("import dashboard") == 1
    assert threads("import dashboard.launch") == 1
    assert threads("import scoring", OPENBLAS_NUM_THREADS="2") == 2  # a user's own setting is kept


def test_the_app_script_imports_the_dashboard_before_it_draws_anything():
    """dashboard/app.py's prefetch draws a table (which loads numpy) before the app's modules are imported."""
    tree = ast.parse((ROOT / "dashboard" / "app.py").read_text(encoding="utf-8"))
    first_ours = next(i for i, node in enumerate(tree.body) if isinstance(node, ast.Import)
                      and any(a.name == "dashboard" for a in node.names))
    first_call = next(i for i, node in enumerate(tree.body) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))
    assert first_ours < first_call
