# Structure rules of the tree (needs the object files of BUILD): the parts hold and
# library code takes its environment from kg_settings.
#   - no strcmp on a backend's name ("cpu", "fake", "cuda") outside
#     src/backend/backend.c: callers ask the registry for capabilities;
#   - no getenv or setenv in src/ outside src/cli/: the CLI reads the
#     environment once into a kg_settings;
#   - src/run/quiet.c does not include the cuda backend's private backend/cuda_api.h;
#   - src/cli/cmd_list.c does not dlopen (the registry probes the backends);
#   - the parts (docs/architecture.md, "## Parts"): tools/structure.py
#     reads the layer table and checks every include and every call
#     between object files against it, refuses cycles among modules, and
#     refuses process or loader calls in the reader's parts;
#   - outside src/backend/, nothing calls through a backend's ops table;
#   - every module has its own header: no campaign.h;
#   - no pinned or mapped host memory anywhere in src/ (cuMemHostAlloc,
#     cuMemAllocHost, cuMemHostRegister, cudaHostAlloc, ...): references
#     and expected outputs live in pageable host memory, which no kernel
#     can address;
#   - the built-in ops (src/ops/) read their variables by name, as a
#     declared op does (kg_op_var_i, kg_op_var_r of kgate/op.h), never
#     through kg_case's M N K splits eps fields.
. tests/cli_lib.sh
[ -f src/backend/backend.c ] || die "structure: run from the repository root"
bad=0
rule() { # what, offending lines
    if [ -n "$2" ]; then
        echo "FAIL: $1:" >&2
        printf '%s\n' "$2" | sed 's/^/    /' >&2
        bad=1
    fi
}
rule "strcmp on a backend name outside src/backend/backend.c (use the registry's capabilities, kgate/backend.h)" \
    "$(grep -n 'strcmp([^)]*"\(cpu\|fake\|cuda\)"' -r src | grep -v '^src/backend/backend.c:')"
rule "getenv/setenv in library code (read the environment in src/cli/ into a kg_settings, kgate/settings.h)" \
    "$(grep -nE '\b(getenv|setenv|unsetenv|putenv)[[:space:]]*\(' -r src --include='*.c' --include='*.h' | grep -v '^src/cli/')"
rule "src/run/quiet.c includes the cuda backend's private header (ask the backend registry for device processes)" \
    "$(grep -n 'backend/cuda_api.h' src/run/quiet.c)"
rule "src/cli/cmd_list.c calls dlopen (ask the backend registry whether a backend is available)" \
    "$(grep -n 'dlopen' src/cli/cmd_list.c)"
python3 tools/structure.py "${BUILD:-build}" || bad=1
rule "a call through a backend's ops table outside src/backend/ (use the kg_backend_* wrappers)" \
    "$(grep -rn -e '->ops->' src | grep -v '^src/backend/')"
rule "campaign.h is back (one header per module)" \
    "$(ls src/campaign.h 2>/dev/null; grep -rn '^#include "campaign.h"' src tests | head -5)"
rule "pinned or mapped host memory in src/ (a kernel could address it: keep references and expected outputs in pageable memory)" \
    "$(grep -rnE 'cuMemHostAlloc|cuMemAllocHost|cuMemHostRegister|cuMemHostGetDevicePointer|cudaHostAlloc|cudaMallocHost|cudaHostRegister|CU_MEMHOSTALLOC|cuMemAllocManaged|cudaMallocManaged' src)"
rule "a built-in op reads a kg_case field for a variable (read it by name: kg_op_var_i(c, \"M\", -1), kgate/op.h)" \
    "$(grep -nE '(c|cs|kc)->(M|N|K|splits|eps|scale)\b' src/ops/*.c src/ops/*.h)"
[ $bad -eq 0 ] || die "the tree breaks the structure rules above"
