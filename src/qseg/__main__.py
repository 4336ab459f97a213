"""``python -m qseg`` runs the command line."""

import sys

from qseg.cli import main

sys.exit(main())
