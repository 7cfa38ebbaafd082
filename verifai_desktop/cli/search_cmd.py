"""`verifai` sub-commands: search. (Owner fills in register functions.)"""

from __future__ import annotations
