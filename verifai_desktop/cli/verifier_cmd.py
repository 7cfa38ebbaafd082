"""`verifai` sub-commands: eval verifier, models export-verifier. (Owner fills in register functions.)"""

from __future__ import annotations
