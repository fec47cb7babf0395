"""Sentiment classification with attention around the classifier (`seq2seq_attention.model.classifier`): the
labelled sentences, training, and attention figures."""
