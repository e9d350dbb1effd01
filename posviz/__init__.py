"""posviz: see positional embeddings."""
