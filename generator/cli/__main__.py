"""``python -m generator.cli``: the same entry point as the ``corpus`` script."""

import sys

from generator.cli.main import main

sys.exit(main())
