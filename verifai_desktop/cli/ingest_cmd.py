"""`verifai` sub-commands: ingest. (Owner fills in register functions.)"""

from __future__ import annotations
