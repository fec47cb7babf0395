"""What both tasks share around the model: input checks, devices, the vocabulary, batching, the checkpoint format
and its registry, atomic writes and folder locks, settings, the training loop and the figures' Korean text."""
