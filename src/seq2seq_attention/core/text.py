"""What both tasks drop from a sentence before cutting it into words."""

DROPPED_CATEGORIES = ("Mn", "Cf")
"""The Unicode categories both tasks drop from a sentence, after decomposing it (NFD), before cutting it into words:
combining marks (the accents of "cliché" and "naïve", whether typed composed or decomposed) and invisible format
characters (zero-width joiner and space, soft hyphen, byte-order mark), so that "go\u200dod" reads as "good"."""
