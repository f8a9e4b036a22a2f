/* cmd_new.c: `kgate new plan [--backend cpu|cuda] [--op OP]`: prints a
 * small, commented plan that `kgate check` accepts as printed and that
 * `kgate run` takes to a verdict in a few tens of seconds on the cpu
 * backend: one case, a baseline and a candidate from kernels/, the paths
 * relative to the repository root (where the plan is meant to be saved).
 * tests/cli/kernel_contracts.sh checks and runs it. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "kgate/op.h"

/* One template: a backend and an op, the case's variables, and the two
 * arms (the lines after their source; "" for none). */
typedef struct plan_template {
    const char *backend, *op;
    const char *dtype, *shape;      /* the case: its dtype, its variables as "M = 128\nN = 128\n" */
    const char *base_src, *base_keys;
    const char *cand_src, *cand_keys;
    const char *cand_note;          /* a comment above the candidate */
} plan_template;

#define SAME_KERNEL "# the kernel under test: point source at yours (here the baseline's own kernel,\n" \
                    "# so the verdict is not FASTER until it is replaced)\n"
#define YOURS "# the kernel under test: point source at yours\n"

static const plan_template templates[] = {
    { "cpu", "gemm_bt", "f32", "M = 128\nN = 128\nK = 128\n", "kernels/cpu/gemm_bt_naive.c", "",
      "kernels/cpu/gemm_bt_blocked.c", "", YOURS },
    { "cpu", "rowsum", "f32", "M = 256\nN = 4096\n", "kernels/cpu/rowsum_naive.c", "",
      "kernels/cpu/rowsum_unrolled.c", "", YOURS },
    { "cpu", "gemm_nt", "f32", "M = 128\nN = 128\nK = 128\n", "kernels/cpu/gemm_nt_naive.c", "",
      "kernels/cpu/gemm_nt_naive.c", "", SAME_KERNEL },
    { "cpu", "gemm_splitk", "f32", "M = 64\nN = 64\nK = 512\nsplits = 4\n", "kernels/cpu/gemm_splitk_naive.c", "",
      "kernels/cpu/gemm_splitk_naive.c", "", SAME_KERNEL },
    { "cpu", "layernorm", "f32", "M = 256\nN = 1024\n", "kernels/cpu/layernorm_naive.c", "",
      "kernels/cpu/layernorm_naive.c", "", SAME_KERNEL },
    { "cpu", "rmsnorm", "f32", "M = 256\nN = 1024\n", "kernels/cpu/rmsnorm_naive.c", "",
      "kernels/cpu/rmsnorm_naive.c", "", SAME_KERNEL },
    { "cpu", "softmax", "f32", "M = 256\nN = 1024\n", "kernels/cpu/softmax_naive.c", "",
      "kernels/cpu/softmax_naive.c", "", SAME_KERNEL },
    { "cpu", "rowmax", "f32", "M = 256\nN = 1024\n", "kernels/cpu/rowmax_naive.c", "",
      "kernels/cpu/rowmax_naive.c", "", SAME_KERNEL },
    /* the cuda kernels carry their entry and launch geometry in their
     * kernel contracts (docs/plan-format.md, "Kernel contracts") */
    { "cuda", "gemm_bt", "bf16", "M = 1024\nN = 1024\nK = 1024\n", "kernels/cuda/gemm_bt_naive.cu", "",
      "kernels/cuda/gemm_bt_tiled.cu", "", YOURS },
    { "cuda", "rowsum", "f32", "M = 4096\nN = 8192\n", "kernels/cuda/reduce_sum.cu",
      "defines = RED_T=32 RED_P=1 RED_L=1   # one warp per row, scalar loads\n"
      "grid = M\nblock = 32\nshared = 0\n",
      "kernels/cuda/reduce_sum.cu",
      "defines = RED_T=256 RED_P=1 RED_L=8  # 256 threads per row, 8-element loads\n"
      "grid = M\nblock = 256\nshared = 0\n", YOURS },
};
#define NTEMPLATES (sizeof templates / sizeof templates[0])

static void list_templates(FILE *fp)
{
    for (size_t i = 0; i < NTEMPLATES; i++)
        fprintf(fp, "%s--backend %s --op %s", i ? ", " : "", templates[i].backend, templates[i].op);
    fputc('\n', fp);
}

static void print_plan(const plan_template *t)
{
    printf("# A first kgate plan (docs/plan-format.md), from kgate new plan.\n");
    printf("# Paths are relative to this file's folder: save it at the root of the kgate tree\n"
           "#   kgate new plan --backend %s --op %s > first.kg\n"
           "# or point the sources at your kernels (absolute paths, or relative to the plan).\n"
           "#   kgate check first.kg   the admission checks only\n"
           "#   kgate run first.kg     checks, timed rounds in fresh processes, the verdict\n",
           t->backend, t->op);
    printf("[campaign]\n"
           "backend = %s\n"
           "quiet = 2              # seconds of quiet host before each process; 30 (the default) on a dedicated machine\n"
           "warmup = 1\n"
           "samples = 5\n"
           "rounds = 3\n"
           "margin = 5%%            # FASTER needs the lower bound of the time reduction above 5%%\n",
           t->backend);
    if (strcmp(t->backend, templates[0].backend) == 0)
        printf("max_steal = 0          # a shared VM's hypervisor steals CPU time: not judged here; delete this line on\n"
               "                       # a dedicated host (the default, 10%%, contaminates a process)\n");
    printf("timeout = 120\n"
           "\n"
           "# the problem: one shape of the op (kgate list shows each op's variables)\n"
           "[case first]\n"
           "op = %s\n"
           "dtype = %s\n"
           "%s"
           "\n"
           "# the incumbent: what the candidate must beat\n"
           "[arm baseline]\n"
           "op = %s\n"
           "role = baseline\n"
           "source = %s\n"
           "%s"
           "\n"
           "%s"
           "[arm candidate]\n"
           "op = %s\n"
           "role = candidate\n"
           "source = %s\n"
           "%s"
           "\n"
           "# An A/A control, a second load of the baseline, tells whether this host can resolve\n"
           "# the gate's reduction at all; add it to a campaign whose verdict you mean to rely on:\n"
           "# [arm baseline_copy]\n"
           "# op = %s\n"
           "# role = control\n"
           "# of = baseline\n"
           "\n"
           "[gate]\n"
           "rule = interval\n"
           "min_reduction = 10%%    # the candidate must cut the baseline's time by at least 10%%\n",
           t->op, t->dtype, t->shape, t->op, t->base_src, t->base_keys, t->cand_note, t->op, t->cand_src,
           t->cand_keys, t->op);
}

static const char about[] =
    "plan: prints a small, commented plan on stdout, one case and two arms (a baseline and a\n"
    "candidate) from the kernels of the kgate tree, that kgate check accepts as printed and\n"
    "kgate run takes to a verdict.  Save it at the root of the tree (kgate new plan > first.kg),\n"
    "or point its sources at your kernels.\n";

static const char footer[] = "Exit status: 0 printed, 2 usage error (an unknown backend or op).\n";

int kg_cmd_new(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *what = NULL, *backend = templates[0].backend, *op = templates[0].op;
    const kg_cli_opt opts[] = {
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &backend,
          .help = "the plan's backend: cpu (default) or cuda" },
        { .name = "op", .arg = "OP", .kind = KG_CLI_STRING, .dst = &op,
          .help = "the op of its case and arms (default gemm_bt); kgate list shows the ops" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "new", .args = "plan", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, &what);
    if (parsed != KG_CLI_GO) return parsed;
    if (strcmp(what, "plan") != 0) {
        fprintf(stderr, "kgate new: unknown kind '%s' (kgate new plan prints a plan template)\n", what);
        return KG_EXIT_USAGE;
    }
    int backend_known = 0;
    for (size_t i = 0; i < NTEMPLATES; i++) {
        if (strcmp(templates[i].backend, backend) != 0) continue;
        backend_known = 1;
        if (strcmp(templates[i].op, op) == 0) {
            print_plan(&templates[i]);
            return KG_EXIT_PASS;
        }
    }
    if (!backend_known)
        fprintf(stderr, "kgate new plan: no template for backend '%s' (use --backend cpu or --backend cuda)\n",
                backend);
    else
        fprintf(stderr, "kgate new plan: no template for op '%s' on backend '%s'%s; the templates: ", op, backend,
                kg_op_find(op) == NULL ? " (kgate knows no such op: kgate list shows the ops)" : "");
    if (backend_known) list_templates(stderr);
    return KG_EXIT_USAGE;
}
