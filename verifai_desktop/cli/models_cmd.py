"""`verifai` sub-commands: models. (Owner fills in register functions.)"""

from __future__ import annotations
