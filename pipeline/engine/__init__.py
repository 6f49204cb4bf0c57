"""Engines beyond one process: `run_dask` computes a scenario file on Dask
(docs/input.md#beyond-one-machine), partition by partition, each written by a worker."""
