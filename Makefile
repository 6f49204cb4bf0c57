# `make run` and `make test` each create/refresh .venv themselves.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
# make run installs what running needs; make test adds the test, lint and Dask tools
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run test soak lint format bench clean

$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(VENV)/bin/pip install --quiet -e '.[dev,dask]'
	touch $(STAMP)

run: $(RUN_STAMP)
	mkdir -p output
	$(VENV)/bin/pipeline calibrate scenarios/measured.csv -o output/calibration.toml --force
	$(VENV)/bin/pipeline run scenarios/measured.csv --calibration output/calibration.toml
	$(VENV)/bin/pipeline run scenarios/q1-q5.csv scenarios/collectives.csv scenarios/models.csv scenarios/training.csv scenarios/serving.csv
	@echo
	@echo "Open output/index.html in a browser: it links every report above and the calibration."

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest -n auto --durations=20

soak: $(STAMP)
	HYPOTHESIS_PROFILE=explore $(VENV)/bin/pytest -m soak
	HYPOTHESIS_PROFILE=explore FUZZ_EXAMPLES=1000 $(VENV)/bin/pytest tests/test_fuzz.py tests/test_fuzz_workbooks.py tests/test_fuzz_compare.py tests/test_engines_agree.py

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/bench_engine.py
	$(VENV)/bin/python benchmarks/bench_plots.py
	$(VENV)/bin/python benchmarks/bench_collectives.py
	$(VENV)/bin/python benchmarks/bench_workbook.py
	$(VENV)/bin/python benchmarks/bench_startup.py
	$(VENV)/bin/python benchmarks/bench_pipeline.py
	$(VENV)/bin/python benchmarks/bench_xlsx_input.py
	$(VENV)/bin/python benchmarks/bench_trace.py
	$(VENV)/bin/python benchmarks/bench_compare.py
	$(VENV)/bin/python benchmarks/bench_dask.py
	$(VENV)/bin/python benchmarks/bench_ab.py

clean:
	rm -rf $(VENV) output .pytest_cache
