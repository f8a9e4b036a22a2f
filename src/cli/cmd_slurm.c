#include "cli.h"
int kg_cmd_slurm(int argc, char **argv, const kg_settings *env) { (void)argc; (void)argv; (void)env; return 2; }
