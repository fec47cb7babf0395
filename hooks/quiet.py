"""A clean build prints warnings and errors only: mkdocs-macros lists every variable (some 900) at INFO level.

Its logger goes to WARNING when MkDocs loads this hook (it loads hooks while it reads mkdocs.yml, before any plugin
starts), so the listing is off and a macro's warning or error still shows (tests/site/test_site_build.py counts the
lines).
"""

import logging

logging.getLogger("mkdocs.plugins.mkdocs_macros").setLevel(logging.WARNING)
