"""`verifai` sub-commands: ask. (Owner fills in register functions.)"""

from __future__ import annotations
