"""``python -m structsvm.cli``: the ``structsvm`` command."""
import sys

from . import main

sys.exit(main())
