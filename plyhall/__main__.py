"""``python -m plyhall``: the ``plyhall`` command, as the console script runs it."""

import sys

from plyhall.entry import main

sys.exit(main())
