# kgate: build, test, sanitize.
#   make              build bin/kgate and lib/libkgate.a
#   make test         every CPU test (unit, golden, CLI, end to end)
#   make sanitize     the same tests built with ASan + UBSan
#   make test-gpu     GPU tests (needs an NVIDIA GPU and driver)
#   make WERROR=1     warnings are errors (CI)
#   make portable     bin/kgate-portable, linked statically but for libc, and
#                     bin/isolation-probe (libc only; tests/gpu/run.sh runs it)
CC      ?= cc
BUILD   ?= build
SANITIZE ?=
WERROR  ?=

WARN   = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
         -Wwrite-strings -Wdouble-promotion -Wformat=2 -Wundef -Wvla
# OpenBLAS's include folder and static link line come from pkg-config;
# OPENBLAS_CFLAGS / _LIBS / _STATIC override them where it has no entry.
PKG_CONFIG ?= pkg-config
OPENBLAS_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags openblas 2>/dev/null)
OPENBLAS_LIBS ?= $(shell $(PKG_CONFIG) --libs openblas 2>/dev/null || echo -lopenblas)
OPENBLAS_STATIC ?= $(shell $(PKG_CONFIG) --libs --static openblas 2>/dev/null || echo -lopenblas -lgfortran)
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -MMD -MP -Iinclude -Isrc \
         $(OPENBLAS_CFLAGS) $(WARN)
ifneq ($(WERROR),)
CFLAGS_BASE += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS_BASE += -fsanitize=$(SANITIZE) -fno-sanitize-recover=undefined
LDSAN = -fsanitize=$(SANITIZE)
endif
KG_VERSION := 0.1.0
KG_GIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
# the stamp reaches version.c alone; .stamp changes when the commit does,
# so version.o is rebuilt exactly then
VERSION_FLAGS = -DKG_VERSION='"$(KG_VERSION)"' -DKG_GIT_SHA='"$(KG_GIT)"'
override CFLAGS := $(CFLAGS_BASE) $(CFLAGS)

# libinih, GSL and libseccomp are linked statically: GPU nodes often lack them.
LIBS = -Wl,-Bstatic -linih -lgsl -lseccomp -Wl,-Bdynamic -ljansson -lcrypto $(OPENBLAS_LIBS) -ldl -lm -lpthread

LIB_SRC  = $(sort $(wildcard src/*.c src/backend/*.c src/ops/*.c))
CLI_SRC  = $(sort $(wildcard src/cli/*.c))
TEST_SRC = $(sort $(wildcard tests/unit/test_*.c))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN = $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
LIBA     = $(BUILD)/libkgate.a
KGATE    = $(BUILD)/kgate

.PHONY: all test sanitize test-gpu portable clean FORCE
all: $(KGATE) bin/kgate

# header dependencies come from the compiler (-MMD -MP): the .d files
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(KG_VERSION) $(KG_GIT)' | cmp -s - $@ || echo '$(KG_VERSION) $(KG_GIT)' > $@

$(BUILD)/src/version.o: src/version.c $(BUILD)/version.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(VERSION_FLAGS) -c $< -o $@

FORCE:

$(LIBA): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(KGATE): $(CLI_OBJ) $(LIBA)
	$(CC) $(LDSAN) -o $@ $(CLI_OBJ) $(LIBA) $(LIBS)

bin/kgate: $(KGATE)
	@mkdir -p bin
	cp $(KGATE) bin/kgate

$(BUILD)/tests/%: tests/unit/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -o $@ $< $(LIBA) $(LDSAN) $(LIBS)

# the stand-in CUDA driver of test_cuda_iso (per-arm isolation without a GPU)
$(BUILD)/tests/libcuda_fake.so: tests/unit/fake_libcuda.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -fPIC -shared $(WARN) -Wno-missing-prototypes \
	    $(if $(WERROR),-Werror) -o $@ $<

test: $(KGATE) $(TEST_BIN) $(BUILD)/tests/libcuda_fake.so
	@KGATE=$(abspath $(KGATE)) BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN)

sanitize:
	$(MAKE) BUILD=build-san SANITIZE=address,undefined test

test-gpu: $(KGATE)
	@KGATE=$(abspath $(KGATE)) sh tests/gpu/run.sh

# The driver facts per-arm isolation rests on (tests/gpu/isolation_probe.c):
# dlopens libcuda, needs only the C library.
bin/isolation-probe: tests/gpu/isolation_probe.c
	@mkdir -p bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 $(WARN) $(if $(WERROR),-Werror) -o $@ $< -ldl

# One binary that needs only the C library: for copying kgate to a GPU node.
portable: $(CLI_OBJ) $(LIBA) bin/isolation-probe
	@mkdir -p bin
	$(CC) -o bin/kgate-portable $(CLI_OBJ) $(LIBA) -Wl,-Bstatic -linih -lgsl -lseccomp -ljansson -lcrypto \
	    $(filter-out -lm -lpthread,$(OPENBLAS_STATIC)) -lquadmath -Wl,-Bdynamic -ldl -lm -lpthread

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d)

clean:
	rm -rf build build-san bin
