"""videomem: a multimodal memory for long videos and an agent that answers questions from it."""

__version__ = "0.1.0"
