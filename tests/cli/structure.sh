# Structure rules of the tree (no binary needed): the backend seam holds and
# library code takes its environment from kg_settings.
#   - no strcmp on a backend's name ("cpu", "fake", "cuda") outside
#     src/backend/backend.c: callers ask the registry for capabilities;
#   - no getenv or setenv in src/ outside src/cli/: the CLI reads the
#     environment once into a kg_settings;
#   - src/quiet.c does not include the cuda backend's private backend/cuda_api.h;
#   - src/cli/cmd_list.c does not dlopen (the registry probes the backends).
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
[ $bad -eq 0 ] || die "the tree breaks the structure rules above"
