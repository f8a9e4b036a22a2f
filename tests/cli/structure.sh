# Structure rules of the tree (no binary needed): the backend seam holds and
# library code takes its environment from kg_settings.
#   - no strcmp on a backend's name ("cpu", "fake", "cuda") outside
#     src/backend/backend.c: callers ask the registry for capabilities;
#   - no getenv or setenv in src/ outside src/cli/: the CLI reads the
#     environment once into a kg_settings;
#   - src/quiet.c does not include the cuda backend's private backend/cuda_api.h;
#   - src/cli/cmd_list.c does not dlopen (the registry probes the backends);
#   - the layers (docs/architecture.md): no include runs upward.  The op
#     contract (src/ops/, kgate/op.h) includes no oracle, backend, evidence
#     or campaign module; the oracle includes nothing of src/ops/ nor any
#     backend; backends include no oracle, evidence, report, supervisor or
#     worker; the statistics (stats.c, analysis.c) include nothing but
#     kgate/stats.h; evidence and rows include no backend, oracle, report,
#     supervisor or worker; reports include no backend, supervisor or worker;
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
rule "src/quiet.c includes the cuda backend's private header (ask the backend registry for device processes)" \
    "$(grep -n 'backend/cuda_api.h' src/quiet.c)"
rule "src/cli/cmd_list.c calls dlopen (ask the backend registry whether a backend is available)" \
    "$(grep -n 'dlopen' src/cli/cmd_list.c)"
# includes of a set of files that match a pattern (file:line:include)
incl() { # files... -- pattern
    pat=$1; shift
    grep -nE "^#include \"($pat)" "$@" 2>/dev/null
}
rule "the op contract includes a higher layer" \
    "$(incl 'kgate/(oracle|backend|evidence)\.h|backend/|supervisor|worker|report|evidence' src/ops/*.c src/ops/*.h include/kgate/op.h)"
rule "the oracle includes op internals or a backend" \
    "$(incl 'ops/|backend|kgate/backend\.h' src/oracle.c include/kgate/oracle.h)"
rule "a backend includes the oracle, the evidence, the reports, the supervisor or the worker" \
    "$(incl 'kgate/(oracle|evidence)\.h|report|supervisor|worker|evidence' src/backend/*.c src/backend/*.h include/kgate/backend.h)"
rule "the statistics include more than kgate/stats.h (and the plain data it names)" \
    "$(grep -nE '^#include "' src/stats.c src/analysis.c include/kgate/stats.h | grep -vE '"kgate/(stats|plan|err|peaks)\.h"')"
rule "the evidence module includes a backend, the oracle, a report, the supervisor or the worker" \
    "$(incl 'kgate/(backend|oracle)\.h|backend/|report|supervisor|worker' src/rows.c src/evidence.c include/kgate/evidence.h)"
rule "a report includes a backend, the supervisor or the worker" \
    "$(incl 'kgate/backend\.h|backend/|supervisor|worker' src/report*.c src/report*.h)"
rule "a call through a backend's ops table outside src/backend/ (use the kg_backend_* wrappers)" \
    "$(grep -rn -e '->ops->' src | grep -v '^src/backend/')"
rule "campaign.h is back (one header per module)" \
    "$(ls src/campaign.h 2>/dev/null; grep -rn '^#include "campaign.h"' src tests | head -5)"
rule "pinned or mapped host memory in src/ (a kernel could address it: keep references and expected outputs in pageable memory)" \
    "$(grep -rnE 'cuMemHostAlloc|cuMemAllocHost|cuMemHostRegister|cuMemHostGetDevicePointer|cudaHostAlloc|cudaMallocHost|cudaHostRegister|CU_MEMHOSTALLOC|cuMemAllocManaged|cudaMallocManaged' src)"
rule "a built-in op reads a kg_case field for a variable (read it by name: kg_op_var_i(c, \"M\", -1), kgate/op.h)" \
    "$(grep -nE '(c|cs|kc)->(M|N|K|splits|eps|scale)\b' src/ops/*.c src/ops/*.h)"
[ $bad -eq 0 ] || die "the tree breaks the structure rules above"
