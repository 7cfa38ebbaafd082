"""`verifai` sub-commands: eval. (Owner fills in register functions.)"""

from __future__ import annotations
