"""The Dask engine: `run_dask` computes a scenario file on a Dask cluster."""
