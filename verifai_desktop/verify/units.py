"""Units of measurement: how a figure's unit is written, normalised, and scaled.

:mod:`~verifai_desktop.verify.numbers` reads a figure's unit with :data:`SYMBOL_UNITS` and
:data:`WORD_UNITS`; :mod:`~verifai_desktop.verify.figures` converts between units of one
dimension with :data:`SCALES` (SI prefixes; a month is 1/12 of a Julian year) and treats the
:data:`COUNT_UNITS` as counts of one kind of thing (people, animals, samples) that add up.
"""

from __future__ import annotations

SYMBOL_UNITS = {
    "%": "%", "mg": "mg", "g": "g", "kg": "kg", "µg": "µg", "μg": "µg", "ug": "µg",
    "mcg": "µg", "ng": "ng", "pg": "pg", "ml": "ml", "mL": "ml", "l": "l", "L": "l",
    "µl": "µl", "μl": "µl", "µL": "µl", "μL": "µl", "ul": "µl", "dl": "dl", "dL": "dl",
    "mmol": "mmol", "µmol": "µmol", "μmol": "µmol", "nmol": "nmol", "pmol": "pmol",
    "mol": "mol", "mM": "mmol/l", "µM": "µmol/l", "μM": "µmol/l", "nM": "nmol/l",
    "pM": "pmol/l", "mm": "mm", "cm": "cm", "m": "m", "km": "km", "µm": "µm", "μm": "µm",
    "nm": "nm", "uM": "µmol/l", "umol": "µmol", "mmHg": "mmHg", "mm Hg": "mmHg",
    "MPa": "MPa", "kPa": "kPa", "GPa": "GPa",
    "Pa": "Pa", "kDa": "kDa", "Da": "Da", "kb": "kb", "bp": "bp", "Mb": "Mb",
    "kcal": "kcal", "kJ": "kJ", "Gy": "Gy", "cGy": "cGy", "IU": "IU", "U": "U", "Hz": "Hz",
    "°C": "°C", "° C": "°C", "ºC": "°C", "h": "hours", "hr": "hours", "hrs": "hours",
    "min": "minutes", "d": "days", "wk": "weeks", "wks": "weeks", "mo": "months",
    "yr": "years", "yrs": "years", "s": "seconds", "sec": "seconds", "ms": "ms", "m2": "m2",
    "m²": "m2",
}  # fmt: skip
"""Unit spellings -> normalised unit, matched case-sensitively (nM is nanomolar, nm nanometres)."""
WORD_UNITS = {
    "percent": "%", "per cent": "%", "fold": "fold", "times": "times",
    "year": "years", "month": "months", "week": "weeks", "day": "days", "hour": "hours",
    "minute": "minutes", "second": "seconds",
    "patient": "patients", "participant": "patients", "subject": "patients",
    "individual": "patients", "person": "patients", "people": "patients",
    "volunteer": "patients", "women": "women", "woman": "women", "men": "men", "man": "men",
    "children": "children", "child": "children", "adult": "adults", "infant": "infants",
    "mice": "mice", "mouse": "mice", "rat": "rats", "cell": "cells", "sample": "samples",
    "case": "cases", "control": "controls", "study": "studies", "studies": "studies",
    "trial": "trials", "gene": "genes", "family": "families", "families": "families",
    "death": "deaths", "event": "events",
    "gram": "g", "kilogram": "kg", "milligram": "mg", "microgram": "µg", "litre": "l",
    "liter": "l", "millilitre": "ml", "milliliter": "ml", "metre": "m", "meter": "m",
    "kilometre": "km", "kilometer": "km", "centimetre": "cm", "centimeter": "cm",
    "millimetre": "mm", "millimeter": "mm",
}  # fmt: skip
"""Word units (singular; a plural "s" is accepted), matched case-insensitively; any word for
people counted in a study is "patients"."""

SCALES: dict[str, tuple[str, float]] = {
    "kg": ("mass", 1e3), "g": ("mass", 1.0), "mg": ("mass", 1e-3), "µg": ("mass", 1e-6),
    "ng": ("mass", 1e-9), "pg": ("mass", 1e-12),
    "l": ("volume", 1.0), "dl": ("volume", 0.1), "ml": ("volume", 1e-3), "µl": ("volume", 1e-6),
    "mol": ("amount", 1.0), "mmol": ("amount", 1e-3), "µmol": ("amount", 1e-6),
    "nmol": ("amount", 1e-9), "pmol": ("amount", 1e-12),
    "mmol/l": ("molar", 1e-3), "µmol/l": ("molar", 1e-6), "nmol/l": ("molar", 1e-9),
    "pmol/l": ("molar", 1e-12),
    "km": ("length", 1e3), "m": ("length", 1.0), "cm": ("length", 1e-2), "mm": ("length", 1e-3),
    "µm": ("length", 1e-6), "nm": ("length", 1e-9),
    "GPa": ("pressure", 1e9), "MPa": ("pressure", 1e6), "kPa": ("pressure", 1e3),
    "Pa": ("pressure", 1.0),
    "ms": ("time", 1e-3), "seconds": ("time", 1.0), "minutes": ("time", 60.0),
    "hours": ("time", 3600.0), "days": ("time", 86400.0), "weeks": ("time", 604800.0),
    "months": ("time", 2629800.0), "years": ("time", 31557600.0),
    "Gy": ("dose", 1.0), "cGy": ("dose", 1e-2), "kb": ("bases", 1e3), "bp": ("bases", 1.0),
    "Mb": ("bases", 1e6),
}  # fmt: skip
"""Normalised unit -> (dimension, factor to the dimension's base unit)."""
COUNT_UNITS = frozenset((
    "", "patients", "women", "men", "children", "adults", "infants", "mice", "rats", "cells",
    "samples", "cases", "controls", "studies", "trials", "genes", "families", "deaths", "events",
))  # fmt: skip
"""Units of counts (and the bare figure): a share of two of them, or their sum, is a figure."""
PEOPLE = frozenset(("patients", "women", "men", "children", "adults", "infants"))
"""Count units of people: "169 men and 88 women" add up to "257 patients"."""
