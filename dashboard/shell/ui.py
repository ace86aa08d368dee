"""The names dashboard/annotations/panel.py still reads as `ui.*`, from the shell's modules by job:
viewstate.py (the view and the URL), sidebar.py (the profile picker and the Data panel), scorer.py
(scoring with a progress bar), context.py (the Context every page reads), output.py (errors and
untrusted text). Every other module imports those directly; this goes once the annotations panel
does too (issue 29.6)."""

from dashboard.shell.context import Context
from dashboard.shell.output import show_error
from dashboard.shell.scorer import score
from dashboard.shell.viewstate import open_slice, seed, view

__all__ = ["Context", "open_slice", "score", "seed", "show_error", "view"]
