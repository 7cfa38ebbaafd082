"""Entry script of the frozen ``verifai-desktop`` app (``installers/verifai.spec``).

The frozen twin of the ``verifai-desktop`` GUI script (``verifai_desktop.ui.app:main``).
"""

import multiprocessing
import sys

if __name__ == "__main__":
    # First, before Qt is imported: the ingest's parser worker is this executable started
    # again with --multiprocessing-fork; freeze_support() runs the worker and exits.
    multiprocessing.freeze_support()

    from verifai_desktop.ui.app import main

    sys.exit(main())
