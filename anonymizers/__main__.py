"""``python -m anonymizers``: the ``anonymizers`` command (e.g. in a child process of
``anonymizers compare``, with the running interpreter)."""

import sys

from anonymizers.cli import main

sys.exit(main())
