"""What both tasks share: tokens, the input-error type, input checks, devices, the vocabulary,
batching, the checkpoint format and the training loop."""
