"""`python -m seq2seq_attention.cli`: the same as the `seq2seq-attention` command."""

import sys

from . import main

sys.exit(main())
