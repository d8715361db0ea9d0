"""Video files: probe, decode, plan clips, sample frames, align transcripts."""
