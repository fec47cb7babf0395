"""What the course teaches, and nothing else: the scores and the attention module (`scores`, `attention`), the
encoder, the decoders, `Seq2Seq` and its builder (`seq2seq`), the search loops, the sentiment classifier, and the
small tensor helpers they use (`tensors`).

It imports torch, the standard library and the shape annotations (jaxtyping, checked by beartype) only, never the
workbench around it (training, checkpoints, files, evaluation, the command line): import-linter's contracts in
pyproject.toml say so and the test suite runs them. Importing this package imports none of its modules: `names`,
`tokens`, `defaults` and `rules` are read without torch.
"""
