"""One run end to end on disk: the output folder, the output jobs, the manifest, the index."""
