"""The model: dtypes, ops, the hardware catalog, the roofline math, the run statistics."""
