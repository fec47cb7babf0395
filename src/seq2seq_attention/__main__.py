"""`python -m seq2seq_attention`: the `seq2seq-attention` command line (as `python -m seq2seq_attention.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
