# `make run`  : install, start DynamoDB Local (persistent, var/dynamodb), create tables, then supervisord
#               (deploy/supervisord.conf): gunicorn on 127.0.0.1:8000 (DEBUG=False), the workers and
#               the session clean-up, each started again when it dies
# `make dev`  : the same with Django's development server (autoreload, DEBUG=True)
# `make test` : install (Chromium and PostgreSQL from Debian too), lint, run the whole suite (browser
#               tests included) on its own in-memory DynamoDB Local and throwaway PostgreSQL server, then
#               the DynamoDB layer's tests again with DYNAMODB_FAST_CALLS=false
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run dev test lint format bench chromium postgres messages compilemessages

CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

install: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt requirements-runtime.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Java runs DynamoDB Local: not needed when the target talks to another DynamoDB, named by
# $(1): DYNAMODB_HOST for `make run` and `make dev` (set; empty for AWS), TEST_DYNAMODB_HOST
# for `make test`, BENCH_DYNAMODB_HOST for `make bench`.
define check_java
@test -n "$${$(1)+set}" || command -v java >/dev/null 2>&1 || { echo "Java 17+ is required for DynamoDB Local: install it (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless), or set $(1) to a running DynamoDB."; exit 1; }
endef

# The browser tests drive Debian's Chromium (Playwright never downloads a browser here).
chromium:
	@test -x $(CHROMIUM) || { echo "Installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The suite starts its own PostgreSQL server (project/testing/postgres.py) from Debian's server
# binaries, unless TEST_DATABASE_URL names a running one.
postgres:
	@test -n "$$TEST_DATABASE_URL" || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
		|| test -x "$$(pg_config --bindir 2>/dev/null)/initdb" \
		|| { echo "Installing Debian's postgresql for the test suite"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

run: install
	$(call check_java,DYNAMODB_HOST)
	@BIN=$(BIN) bash scripts/run.sh

dev: install
	$(call check_java,DYNAMODB_HOST)
	@BIN=$(BIN) bash scripts/run.sh dev

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The DynamoDB layer's tests run a second time with every call through botocore alone, the
# path a call takes when the fast one (project/dynamo/wire.py) is off or hands it back.
BOTOCORE_ONLY_TESTS := tests/project/test_batch_write.py tests/project/test_shared_reads.py \
	tests/project/test_create_tables.py tests/project/test_aws_read_lag.py tests/social/test_hot_comment.py \
	tests/social/test_likes.py tests/notifications/test_like_fold_faults.py tests/delivery/test_faults.py \
	tests/delivery/test_aws_conflicts.py

test: install chromium postgres lint
	$(call check_java,TEST_DYNAMODB_HOST)
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest $(PYTEST_ARGS)
	DYNAMODB_FAST_CALLS=false $(BIN)/python -m pytest -q $(BOTOCORE_ONLY_TESTS)

bench: install
	$(call check_java,BENCH_DYNAMODB_HOST)
	@for script in bench/[!_]*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# The translation catalogues (docs/how-to/add-a-language.md). `make messages` gathers the texts of
# the code and templates into locale/<code>/LC_MESSAGES/django.po (needs GNU gettext's xgettext);
# `make compilemessages` compiles them into the .mo files the site loads (needs msgfmt). The .mo
# files are committed, so install, test and CI need neither; tests/project/test_translations.py
# fails when a .mo file no longer matches its .po.
# `make messages LANGS="ja pl de"` gathers a new language's catalogue too (LANGS: the codes
# that have a folder in locale/ by default).
I18N_IGNORE := --ignore=.venv --ignore=node_modules --ignore=staticfiles --ignore=var --ignore=tests --ignore=bench
LANGS ?= $(notdir $(wildcard locale/*))
messages: install
	DEBUG=true $(BIN)/python manage.py makemessages --no-obsolete --no-location $(I18N_IGNORE) $(foreach code,$(LANGS),-l $(code))

compilemessages: install
	DEBUG=true $(BIN)/python manage.py compilemessages $(I18N_IGNORE)
