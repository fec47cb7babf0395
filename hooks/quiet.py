"""A clean build prints warnings and errors only (tests/site/test_site_build.py counts the lines): mkdocs-macros lists
every variable (some 900) at INFO level, so its logger goes to WARNING when MkDocs loads this hook, while it reads
mkdocs.yml, before any plugin starts; a macro's warning or error still shows."""

import logging

logging.getLogger("mkdocs.plugins.mkdocs_macros").setLevel(logging.WARNING)
