"""Special tokens and their indices, shared by every vocabulary.

`<pad>` has an index of its own. The seeds (and the PyTorch tutorial) put `<sos>` at
index 0 and pad with 0 as well, so a padded position looked exactly like a start token.
"""

PAD_TOKEN = "<pad>"
SOS_TOKEN = "<sos>"
EOS_TOKEN = "<eos>"
UNK_TOKEN = "<unk>"

PAD_IDX = 0
SOS_IDX = 1
EOS_IDX = 2
UNK_IDX = 3

SPECIAL_TOKENS = (PAD_TOKEN, SOS_TOKEN, EOS_TOKEN, UNK_TOKEN)
