"""The package build. pyproject.toml declares everything; this only carries the app's one settings file,
the top-level `.streamlit/config.toml`, into the wheel as `dashboard/.streamlit/config.toml`, beside the
app script, where Streamlit reads it whatever the working folder."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SETTINGS = Path(__file__).resolve().parent / ".streamlit" / "config.toml"


class BuildWithSettings(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "dashboard" / ".streamlit" / "config.toml"
        self.mkpath(str(target.parent))
        self.copy_file(str(SETTINGS), str(target))


setup(cmdclass={"build_py": BuildWithSettings})
