"""``python -m verifai_desktop`` runs the ``verifai`` command."""

import sys

from verifai_desktop.cli import main

sys.exit(main())
