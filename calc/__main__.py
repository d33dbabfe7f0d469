"""Entry point for ``python -m calc``."""

import sys

from .cli import main

sys.exit(main())
