"""What many tests share: example-corpus paths, chunk and document builders, stores and embedders."""
