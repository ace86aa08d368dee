import sys

from .cli import main

sys.exit(main(exit_when_done=True))
