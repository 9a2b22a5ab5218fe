"""``python -m structsvm``: the command line, as the ``structsvm`` command."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
