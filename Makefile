# attnd — build, run and test. `make` builds, `make run` serves on
# http://127.0.0.1:8080, `make test` runs every test suite.

CC      ?= cc
BUILD   ?= build
PORT    ?= 8080
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wvla \
           -Werror=implicit-function-declaration -Werror=int-conversion
PKGS    := openblas jansson libmicrohttpd zlib gnutls
# Asked of pkg-config once, when first used: after `deps` has installed
# the -dev packages on a fresh machine, not when make reads this file.
pkg_once = $(eval $1 := $$(shell pkg-config $2 $$(PKGS) 2>/dev/null))$($1)
PKG_CFLAGS = $(call pkg_once,PKG_CFLAGS,--cflags)
PKG_LIBS   = $(call pkg_once,PKG_LIBS,--libs)
# -iquote: project headers are found for #include "..." only, so one named
# like a system header (limits.h) never shadows <limits.h>. Each layer sees
# its own folders and those below it (server -> api -> lib): lib/ compiles
# seeing only its own headers, api/ also lib/'s, never server/'s
# (tests/layers/check.py checks the include lines too). api/'s folders are
# floors (docs/architecture.md), lowest first: text, core, routes,
# grading, fronts; each compiles seeing api.h, itself and the floors below.
# server/ sees its own headers and api/'s public ones (api.h, question.h).
API_DIRS := api api/text api/core api/routes api/grading api/fronts
API_INC  := $(addprefix -iquote ,$(API_DIRS))
CPPFLAGS += -D_GNU_SOURCE -MMD -MP
LAYER_INC = -iquote lib $(API_INC)
floor_inc = -iquote api $(addprefix -iquote api/,$(1))
$(BUILD)/lib/%.o: LAYER_INC =
$(BUILD)/api/%.o: LAYER_INC = -iquote lib $(API_INC)
$(BUILD)/api/text/%.o: LAYER_INC = $(call floor_inc,text)
$(BUILD)/api/core/%.o: LAYER_INC = -iquote lib $(call floor_inc,text core)
$(BUILD)/api/routes/%.o: LAYER_INC = -iquote lib $(call floor_inc,text core routes)
$(BUILD)/api/grading/%.o: LAYER_INC = -iquote lib $(call floor_inc,text core routes grading)
$(BUILD)/server/%.o: LAYER_INC = -iquote api
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS  += $(PKG_LIBS) -lm -lpthread

LIB_SRC := $(wildcard lib/*.c)
API_SRC := $(foreach d,$(API_DIRS),$(wildcard $(d)/*.c))
SRV_SRC := $(wildcard server/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
API_OBJ := $(API_SRC:%.c=$(BUILD)/%.o)
SRV_OBJ := $(SRV_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

ifneq ($(V),1)
Q := @
endif

.PHONY: all deps deps-test run test test-unit test-api test-integration check clean \
        asan valgrind format format-check docker-test

all: deps $(BUILD)/libattn.a $(BUILD)/libapi.a $(BUILD)/attnd ## build attnd, libattn.a and libapi.a (the default)

# Install the -dev packages when root on Debian/Ubuntu, or print the line.
deps: ## install the build packages (root on Debian), or print the apt-get line
	@sh mk/deps.sh

# The test suites need a few more tools (xmllint, promtool, ...).
deps-test: ## install what the test suites need as well
	@sh mk/deps.sh test

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

# api/fronts/openapi.c embeds openapi.json with .incbin (-MMD cannot see it).
$(BUILD)/api/fronts/openapi.o: api/fronts/openapi.json
# api/fronts/lab.c embeds the lab page the same way.
$(BUILD)/api/fronts/lab.o: $(wildcard api/fronts/lab/*)

# Archives are made anew, so that an object whose source is gone leaves.
$(BUILD)/libattn.a: $(LIB_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/libapi.a: $(API_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/attnd: $(SRV_OBJ) $(BUILD)/libapi.a $(BUILD)/libattn.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(SRV_OBJ) $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS) -lcmocka

# Unit tests of server modules (test_srv_*.c) also link the server's
# objects, all but main's.
SRV_LIB_OBJ := $(filter-out $(BUILD)/server/main.o,$(SRV_OBJ))
$(BUILD)/tests/test_srv_%: tests/unit/test_srv_%.c $(SRV_LIB_OBJ) $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) -iquote server $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(SRV_LIB_OBJ) $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS) -lcmocka

run: all ## serve on http://127.0.0.1:$(PORT) (PORT=8080)
	@curl -s -o /dev/null --max-time 1 http://127.0.0.1:$(PORT)/; \
	if [ $$? -ne 7 ]; then \
	    echo "port $(PORT) is in use (is attnd already running?): stop what holds it," >&2; \
	    echo "or pick another port: make run PORT=9090, or build/attnd --port 0 for a free one" >&2; \
	    exit 1; \
	fi
	@echo "attnd on http://127.0.0.1:$(PORT)  — try:"
	@echo "  curl -s http://127.0.0.1:$(PORT)/regression/nw -H 'Content-Type: application/json' \\"
	@echo "    -d '{\"x_train\":[1,2,4],\"y_train\":[0,3,1],\"x_query\":[2.5],\"w\":0.5,\"y_query\":[3]}'"
	$(BUILD)/attnd --port $(PORT)

# Every suite prints TAP; tests/run.sh counts and ends with "N passed, N failed".
test: deps-test all $(UNIT_BIN) ## every suite (unit, layers, integration); ends "N passed, N failed"
	@sh tests/run.sh $(BUILD)

# Build the image, run it, run the curl suite against it from a container.
docker-test: ## build the image, run the curl suite against the container
	@sh docker/test.sh

# Unit tests alone (no daemon started): what the container build runs.
test-unit: all $(UNIT_BIN) ## unit tests only, no daemon
	@sh tests/run.sh $(BUILD) unit

check: test format-check ## test, then format-check

format: ## clang-format every C file in place
	clang-format -i lib/*.[ch] api/*.[ch] api/*/*.[ch] server/*.[ch] tests/unit/*.[ch]

format-check: ## fail on any C file clang-format would change
	@clang-format --dry-run --Werror lib/*.[ch] api/*.[ch] api/*/*.[ch] server/*.[ch] tests/unit/*.[ch]

# Dot attention backward vs forward compute time (a measurement, not a test).
.PHONY: bench-backward
bench-backward: $(BUILD)/libattn.a ## dot attention backward against forward compute time
	@mkdir -p $(BUILD)/bench
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/backward_bench tests/bench/backward_bench.c $(BUILD)/libattn.a $(LDLIBS)
	$(BUILD)/bench/backward_bench

# Number printing: ns per double, api_num_format against snprintf("%.17g").
.PHONY: bench-numfmt
bench-numfmt: ## number printing: ns per double against snprintf
	@mkdir -p $(BUILD)/bench
	$(Q)$(CC) -Iapi/text -D_GNU_SOURCE $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/numfmt_bench tests/bench/numfmt_bench.c $(wildcard api/text/numfmt*.c) -lm
	$(BUILD)/bench/numfmt_bench

# JSON numbers: ns per number for attnd's parser and printer against
# fast_float and fmt (Dragonbox) / std::to_chars (Ryu), interleaved in one
# process over the medium and large dot bodies and attnd's answers to them
# (tests/bench/numbers_bench.c; needs g++, libfast-float-dev, libfmt-dev).
CXX ?= g++
NUMBERS_BODIES = medium_dot /attention/dot $(BUILD)/bench/payloads/medium_dot.json \
                 large_dot /attention/dot $(BUILD)/bench/payloads/large_dot.json
.PHONY: bench-numbers numbers-bench-bin
numbers-bench-bin: $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(BUILD)/bench
	@printf '#include <fast_float/fast_float.h>\n#include <fmt/compile.h>\n' | \
	  $(CXX) -std=c++17 -E -x c++ - >/dev/null 2>&1 || { \
	  echo "the JSON number benchmark needs g++, libfast-float-dev and libfmt-dev:" >&2; \
	  echo "  apt-get install g++ libfast-float-dev libfmt-dev" >&2; exit 1; }
	$(Q)$(CXX) -std=c++17 $(CFLAGS) -c -o $(BUILD)/bench/numbers_anchor.o tests/bench/numbers_anchor.cc
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $(BUILD)/bench/numbers_bench.o tests/bench/numbers_bench.c
	$(Q)$(CXX) $(LDFLAGS) -o $(BUILD)/bench/numbers_bench $(BUILD)/bench/numbers_bench.o $(BUILD)/bench/numbers_anchor.o $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)
bench-numbers: all numbers-bench-bin ## JSON numbers: parse and print ns/number against fast_float and Dragonbox
	@[ -f $(BUILD)/bench/payloads/index.json ] || python3 tests/bench/gen_payloads.py $(BUILD)/bench/payloads >/dev/null
	$(BUILD)/bench/numbers_bench $(NUMBERS_BODIES)

# POST /grade/batch in-process: 1000 submissions of the medium dot graded in
# one batch, against computing its reference once plus parsing the 1000
# answers (tests/bench/grade_batch_bench.c; target: ≤ 3×).
.PHONY: bench-batch batch-bench-bin
batch-bench-bin: $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(BUILD)/bench
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/grade_batch_bench tests/bench/grade_batch_bench.c $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)
bench-batch: all batch-bench-bin ## /grade/batch: 1000 medium dot submissions against one reference + parsing the answers
	@[ -f $(BUILD)/bench/payloads/index.json ] || python3 tests/bench/gen_payloads.py $(BUILD)/bench/payloads >/dev/null
	$(BUILD)/bench/grade_batch_bench $(BUILD)/bench/payloads/medium_dot.json

# /grade/batch of a class of 1,000 students, each with their own variant of
# the medium dot (docs/variants.md), copies checked; against the same answers
# in a shared-reference batch (tests/bench/variant_class.py; needs
# python3-numpy: Debian's /usr/bin/python3, as run.py uses).
.PHONY: bench-variants variants-bench-bin
variants-bench-bin: $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(BUILD)/bench
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/variant_class_bench tests/bench/variant_class_bench.c $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)
bench-variants: all variants-bench-bin ## /grade/batch: a class of 1000 variants of the medium dot, copies checked, against one shared reference
	$(or $(wildcard /usr/bin/python3),python3) tests/bench/variant_class.py $(BUILD)/bench/variant_class $(BUILD)/attnd
	$(BUILD)/bench/variant_class_bench $(BUILD)/bench/variant_class

# attnd against nginx, Flask+numpy, dgemm, numpy, fast_float and Dragonbox
# in one run, printed as one table (tests/bench/README.md; needs nginx,
# gunicorn, python3-flask, python3-numpy, wrk, g++, libfast-float-dev,
# libfmt-dev). Never part of `make test`. BENCH_ARGS: extra flags
# for tests/bench/run.py, e.g. --before OTHER_BUILD/attnd --duration 5.
.PHONY: bench
bench: all numbers-bench-bin batch-bench-bin variants-bench-bin ## attnd against nginx, Flask+numpy, dgemm, numpy, fast_float, Dragonbox (BENCH_ARGS=--before OLD/attnd)
	@mkdir -p $(BUILD)/bench
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/dgemm_bench tests/bench/dgemm_bench.c $(LDLIBS)
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/compute_bench tests/bench/compute_bench.c $(BUILD)/libattn.a $(LDLIBS)
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/bench/api_bench tests/bench/api_bench.c $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)
	python3 tests/bench/run.py --attnd $(BUILD)/attnd --tools $(BUILD)/bench --payloads $(BUILD)/bench/payloads $(BENCH_ARGS)
	python3 tests/bench/identical.py --attnd $(BUILD)/attnd $(BENCH_ARGS)

# The lab page (GET /) in headless Chromium, then a page of another origin
# calling the v2 front with binary tensor data (docs/binary.md), then the
# palettes under simulated colour-vision deficiencies: Debian's chromium
# package, playwright-core and axe-core pinned in
# tests/browser/package-lock.json (npm ci once). Prints TAP; screenshots go
# to $(BUILD)/artifacts (lab-chapter.png, lab-card-*.png, lab.png,
# lab-request.png, lab-controls.png, lab-flow.png, lab-transformer.png) with
# the Flow figure's download, flow-self-attention.svg.
.PHONY: browser-test
browser-test: all ## the lab page and a binary tensor data client in headless Chromium
	@[ -d tests/browser/node_modules/playwright-core ] && [ -d tests/browser/node_modules/axe-core ] || \
	  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
	ATTND=$(abspath $(BUILD))/attnd ARTIFACTS=$(abspath $(BUILD))/artifacts \
	  node tests/browser/lab.test.mjs
	node tests/browser/cvd.mjs

# Every suite (unit, and integration against an ASan daemon) under clang's
# AddressSanitizer, LeakSanitizer and UBSan: any report fails the run.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
             UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# tests/load/load.sh's bound on RSS growth after its first round is the
# plain build's (8 MiB): under ASan, freed memory sits in its quarantine
# (256 MiB) for a while, so RSS grows without a leak; LeakSanitizer checks
# leaks there.
asan: ## every suite under ASan, LeakSanitizer and UBSan
	$(SAN_ENV) LOAD_RSS_SLACK_KB=65536 $(MAKE) BUILD=build-asan CC=clang \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer $(SAN_FLAGS)" \
	  LDFLAGS="$(SAN_FLAGS)" test

# The unit suites under valgrind memcheck: no error, no definite or
# indirect leak (tests/valgrind/run.sh; OpenBLAS on one thread).
.PHONY: valgrind
valgrind: ## the unit suites under valgrind memcheck
	$(MAKE) BUILD=build-valgrind CFLAGS="-O1 -g" all \
	  $(UNIT_SRC:tests/unit/%.c=build-valgrind/tests/%)
	@sh tests/valgrind/run.sh build-valgrind

# libFuzzer targets (tests/fuzz) with ASan + UBSan: `make fuzz-smoke` runs
# each for FUZZ_SMOKE_SECONDS, `make fuzz` for FUZZ_SECONDS.
FUZZ_SECONDS       ?= 600
FUZZ_SMOKE_SECONDS ?= 25
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
.PHONY: fuzz fuzz-smoke fuzz-build fuzz-bins
fuzz-build:
	$(MAKE) BUILD=build-fuzz CC=clang \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(SAN_FLAGS)" \
	  LDFLAGS="$(SAN_FLAGS)" fuzz-bins
fuzz-bins: $(FUZZ_BIN) $(BUILD)/fuzz/corpus
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $<")
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)
$(BUILD)/fuzz/corpus: tests/fuzz/corpus.c $(BUILD)/libapi.a $(BUILD)/libattn.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LAYER_INC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libapi.a $(BUILD)/libattn.a $(LDLIBS)
fuzz: fuzz-build ## each libFuzzer target for FUZZ_SECONDS (600)
	@sh tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)
fuzz-smoke: fuzz-build all ## each libFuzzer target for FUZZ_SMOKE_SECONDS (25), then 300 socket cases
	@sh tests/fuzz/run.sh build-fuzz $(FUZZ_SMOKE_SECONDS); rc=$$?; \
	  $(FUZZ_HTTP) --attnd $(BUILD)/attnd --cases 300 || rc=1; exit $$rc

# Request heads and chunked framing, mutated, over a raw socket against a
# live daemon (tests/http/fuzz_heads.py): each case a generated request with
# a GET /version smuggled behind it, after the kept regressions. The seed is
# printed; FUZZ_HTTP_SEED=S replays a run.
FUZZ_HTTP_CASES ?= 20000
FUZZ_HTTP_SEED  ?=
FUZZ_HTTP = python3 tests/http/fuzz_heads.py $(if $(FUZZ_HTTP_SEED),--seed $(FUZZ_HTTP_SEED))
.PHONY: fuzz-http fuzz-http-smoke
fuzz-http-smoke: all ## request heads over a raw socket: 300 cases, seconds
	$(FUZZ_HTTP) --attnd $(BUILD)/attnd --cases 300
fuzz-http: asan-attnd ## request heads over a raw socket: FUZZ_HTTP_CASES (20000) against the ASan daemon
	$(SAN_ENV) $(FUZZ_HTTP) --attnd build-asan/attnd --cases $(FUZZ_HTTP_CASES)

# Load and faults on loopback (tests/load/smoke.sh, wrk and perl): saturation
# with RSS drift, slowloris, disconnects, SIGTERM under load, the resource
# attacks (tests/load/attacks.py), the same against the ASan daemon.
# A class under attack (tests/load/class.py: --short in load-smoke, a
# class of 300 in soak); class-load is its short run alone. A class of 300
# in docs/class.md's two settings (tests/load/class300.py: 20 s phases in
# load-smoke, the ten minutes in soak); class300 is its long run alone.
# load-smoke ≈ 7 min; soak runs it longer.
.PHONY: load-smoke soak asan-attnd attacks class-load class300
asan-attnd:
	$(MAKE) BUILD=build-asan CC=clang \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer $(SAN_FLAGS)" \
	  LDFLAGS="$(SAN_FLAGS)" build-asan/attnd
load-smoke: all asan-attnd ## load, faults, resource attacks, a class under attack and a class of 300 on loopback (about 7 min)
	@sh tests/load/smoke.sh $(BUILD)/attnd build-asan/attnd
soak: all asan-attnd ## load-smoke, longer, with a class of 300 under attack and for ten minutes in two settings (about 45 min)
	@LOAD_SECONDS=60 LOAD_WARMUP=10 SLOW_SECONDS=60 SLOW_INTERVAL=10 \
	  PROBE_REQUESTS=1000 DISCONNECTS=500 ATTACKS_MODE=--long \
	  CLASS_MODE=--full CLASS300_MODE=--full \
	  sh tests/load/smoke.sh $(BUILD)/attnd build-asan/attnd
attacks: all ## the resource attacks alone (tests/load/attacks.py --short, about 1 min)
	@python3 tests/load/attacks.py --short $(BUILD)/attnd
class300: all ## a class of 300 from 300 addresses and from one, ten minutes each, then five beside a batch of 10,000 (tests/load/class300.py --full, about 31 min)
	@python3 tests/load/class300.py --full $(BUILD)/attnd
class-load: all ## a class of 60 students, a teacher and a probe beside one attacker per phase (tests/load/class.py --short, about 2.5 min)
	@python3 tests/load/class.py --short $(BUILD)/attnd

# Install attnd, libattn (static), attn.h, attn.pc and the man page under
# PREFIX (default /usr/local), staged under DESTDIR when set (GNU coding
# standards); `make uninstall` with the same PREFIX and DESTDIR removes
# those files. C programs then build with
#   cc prog.c $(pkg-config --cflags --libs attn)
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL      ?= install
VERSION      := $(shell sed -n 's/.*define ATTND_VERSION "\(.*\)".*/\1/p' api/version.h)
INSTALLED    := $(BINDIR)/attnd $(LIBDIR)/libattn.a $(INCLUDEDIR)/attn.h \
                $(PKGCONFIGDIR)/attn.pc $(MANDIR)/man8/attnd.8
.PHONY: install uninstall
install: all ## install attnd, libattn, attn.h, attn.pc and the man page under PREFIX
	$(INSTALL) -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(LIBDIR)" \
	  "$(DESTDIR)$(INCLUDEDIR)" "$(DESTDIR)$(PKGCONFIGDIR)" \
	  "$(DESTDIR)$(MANDIR)/man8"
	$(INSTALL) -m 755 $(BUILD)/attnd "$(DESTDIR)$(BINDIR)/attnd"
	$(INSTALL) -m 644 $(BUILD)/libattn.a "$(DESTDIR)$(LIBDIR)/libattn.a"
	$(INSTALL) -m 644 lib/attn.h "$(DESTDIR)$(INCLUDEDIR)/attn.h"
	$(INSTALL) -m 644 docs/attnd.8 "$(DESTDIR)$(MANDIR)/man8/attnd.8"
	sed -e '/^#/d' -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	  -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	  -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	  attn.pc.in >"$(DESTDIR)$(PKGCONFIGDIR)/attn.pc"
	chmod 644 "$(DESTDIR)$(PKGCONFIGDIR)/attn.pc"

uninstall: ## remove what install put under PREFIX
	rm -f $(addprefix "$(DESTDIR),$(addsuffix ",$(INSTALLED)))

# Operations checks (tests/ops/run.sh, "N passed, N failed"): install into a
# staging directory and build a program against it with pkg-config; nginx
# in front of two attnd processes, one stopped under load; the Kubernetes
# manifests (kubernetes-models, pinned in tests/ops/k8s/package-lock.json),
# the compose file and the nginx configuration. Needs nginx, docker-compose
# and Node.js (.ci/run installs them).
.PHONY: ops-test
ops-test: all ## install with pkg-config, nginx in front of two attnd, k8s and compose files
	@[ -d tests/ops/k8s/node_modules/kubernetes-models ] || \
	  (cd tests/ops/k8s && npm ci --no-audit --no-fund --loglevel=error)
	@sh tests/ops/run.sh $(BUILD)

clean: ## remove build and build-*
	rm -rf build build-*

# Every answer of tests/cases from two binaries, compared byte for byte
# (a change that must alter no answer): BEFORE=path/to/old/attnd.
compare-cases: all ## every tests/cases answer, byte for byte, against BEFORE=old/attnd
	@[ -n "$(BEFORE)" ] || { echo "usage: make compare-cases BEFORE=path/to/old/attnd" >&2; exit 2; }
	python3 tests/cases/compare_binaries.py $(BEFORE) $(BUILD)/attnd

help: ## this list
	@echo "make TARGET, where TARGET is one of:"
	@sed -n 's/^\([a-z][a-z0-9_-]*\):.*## \(.*\)/\1|\2/p' $(MAKEFILE_LIST) | \
	  awk -F'|' '{ printf "  %-16s %s\n", $$1, $$2 }'
	@echo "Variables: BUILD (build), PORT (8080), CC, CFLAGS, PREFIX, DESTDIR."

-include $(LIB_OBJ:.o=.d) $(API_OBJ:.o=.d) $(SRV_OBJ:.o=.d) $(UNIT_BIN:=.d) $(FUZZ_BIN:=.d)
