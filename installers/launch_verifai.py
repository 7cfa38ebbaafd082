"""Entry script of the frozen ``verifai`` command (``installers/verifai.spec``).

The frozen twin of the ``verifai`` console script (``verifai_desktop.cli:main``).
"""

import multiprocessing
import sys

if __name__ == "__main__":
    # First, before the heavy imports: the ingest's parser worker is this executable started
    # again with --multiprocessing-fork; freeze_support() runs the worker and exits.
    multiprocessing.freeze_support()

    from verifai_desktop.cli import main

    sys.exit(main())
