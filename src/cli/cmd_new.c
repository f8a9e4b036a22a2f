/* cmd_new.c: `kgate new op NAME` prints an op module (docs/ops.md);
 * `kgate new plan [--backend cpu|cuda] [--op OP]` prints a
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
    "or point its sources at your kernels.\n"
    "op NAME: prints a complete op module (docs/ops.md) for a plan's [op NAME] on stdout: an\n"
    "element-wise sum to change into your op, with the plan lines and a CPU kernel in its comment\n"
    "(kgate new op NAME > ops/NAME.c).\n";

static const char footer[] = "Exit status: 0 printed, 2 usage error (an unknown backend or op).\n";

/* `kgate new op NAME`: a complete op module (docs/ops.md) on stdout, an
 * element-wise sum Y = A + B over a variable n, to be changed into the
 * op one has; with, in its comment, the plan lines and a CPU kernel. */
static int print_op(const char *name)
{
    if (strlen(name) == 0 || strlen(name) > 40 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                              "0123456789_") != strlen(name)) {
        fprintf(stderr, "kgate new op: '%s' is not an op name (letters, digits and '_', at most 40)\n", name);
        return KG_EXIT_USAGE;
    }
    if (kg_op_find(name) != NULL) {
        fprintf(stderr, "kgate new op: '%s' is a built-in op (kgate list): name yours otherwise\n", name);
        return KG_EXIT_USAGE;
    }
    const char *N = name;
    printf("/* %s.c: an op for a kgate plan (docs/ops.md), from kgate new op %s.\n"
           " *\n"
           " * As printed it is an element-wise sum, Y[i] = A[i] + B[i] for i < n, in the\n"
           " * case dtype with a float32 Y: change the sizes, the dtypes, the reference,\n"
           " * the bound, the work and the traffic into your op's.  In the plan:\n"
           " *\n"
           " *     [op %s]\n"
           " *     source = ops/%s.c\n"
           " *\n"
           " *     [case small]\n"
           " *     op = %s\n"
           " *     dtype = f32\n"
           " *     n = 1048576\n"
           " *\n"
           " *     [arm mine]\n"
           " *     op = %s\n"
           " *     role = baseline\n"
           " *     source = %s_naive.c\n"
           " *     entry = %s_naive\n"
           " *\n"
           " * and a CPU kernel (%s_naive.c) for it:\n"
           " *\n"
           " *     #include \"kgate/kernel.h\"\n"
           " *     void %s_naive(const kg_kargs *a)\n"
           " *     {\n"
           " *         const float *x = a->in[0], *y = a->in[1];\n"
           " *         float *out = a->out[0];\n"
           " *         int64_t n = kg_var_i(a, \"n\", 0);\n"
           " *         for (int64_t i = 0; i < n; i++) KGATE_STORE(&out[i], x[i] + y[i]);\n"
           " *     }\n"
           " */\n"
           "#include <math.h>\n"
           "#include <stdio.h>\n"
           "#include \"kgate/op.h\"\n\n"
           "static void sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])\n"
           "{\n"
           "    in_elems[0] = in_elems[1] = out_elems[0] = kg_op_var_i(c, \"n\", 0);\n"
           "}\n\n"
           "static kg_dtype out_dtype(const kg_case *c, int o)\n"
           "{\n"
           "    (void)c;\n"
           "    (void)o;\n"
           "    return KG_DT_F32;\n"
           "}\n\n"
           "/* 0 when the case can run; else why not (the case is then INADMISSIBLE). */\n"
           "static int admissible(const kg_case *c, char *why, size_t cap)\n"
           "{\n"
           "    int64_t n = kg_op_var_i(c, \"n\", 0);\n"
           "    if (n < 1 || n > KG_OPS_MAX_ELEMS) {\n"
           "        snprintf(why, cap, \"n = %%lld: it must be in [1, 2^28]\", (long long)n);\n"
           "        return 1;\n"
           "    }\n"
           "    return 0;\n"
           "}\n\n"
           "/* In float64, from the inputs as rounded to their dtype. */\n"
           "static int reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)\n"
           "{\n"
           "    (void)err;\n"
           "    int64_t n = kg_op_var_i(c, \"n\", 0);\n"
           "    for (int64_t i = 0; i < n; i++) out[0][i] = in[0][i] + in[1][i];\n"
           "    return KG_OK;\n"
           "}\n\n"
           "/* Each output a sum of two terms: kgate's bound of a sum element. */\n"
           "static void bound(const kg_case *c, const double *const in[], const double *ref, int o, double *b)\n"
           "{\n"
           "    (void)o;\n"
           "    int64_t n = kg_op_var_i(c, \"n\", 0);\n"
           "    double scale = 0.0;\n"
           "    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(in[0][i]) + fabs(in[1][i]));\n"
           "    for (int64_t i = 0; i < n; i++)\n"
           "        b[i] = kg_ops_bound_elem(fabs(in[0][i]) + fabs(in[1][i]), ref[i], scale, 2, c->dtype, KG_DT_F32);\n"
           "}\n\n"
           "static double flops(const kg_case *c)\n"
           "{\n"
           "    return (double)kg_op_var_i(c, \"n\", 0);\n"
           "}\n\n"
           "/* Every input read once, every output written once. */\n"
           "static double min_bytes(const kg_case *c)\n"
           "{\n"
           "    return (double)kg_op_var_i(c, \"n\", 0) * (2.0 * kg_ops_dtype_bytes(c->dtype) + 4.0);\n"
           "}\n\n"
           "const kg_op kgate_op = {\n"
           "    .abi = KG_OP_ABI,\n"
           "    .name = \"%s\",\n"
           "    .summary = \"Y[n] (f32) = A[n] + B[n] in the case dtype\",\n"
           "    .vars = \"n\",\n"
           "    .nin = 2, .nout = 1,\n"
           "    .in_names = { \"A\", \"B\" },\n"
           "    .out_names = { \"Y\" },\n"
           "    .sizes = sizes,\n"
           "    .out_dtype = out_dtype,\n"
           "    .admissible = admissible,\n"
           "    .reference = reference,\n"
           "    .bound = bound,\n"
           "    .flops = flops,\n"
           "    .min_bytes = min_bytes,\n"
           "    .scalars = \"n\",\n"
           "};\n", N, N, N, N, N, N, N, N, N, N, N);
    return KG_EXIT_PASS;
}

int kg_cmd_new(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    /* kgate new op NAME: two words, which the option table does not take */
    if (argc >= 2 && strcmp(argv[1], "op") == 0) {
        /* -q, which every command takes, leaves the module as it is */
        if (argc == 4 && (strcmp(argv[3], "-q") == 0 || strcmp(argv[3], "--quiet") == 0)) argc = 3;
        if (argc == 3 && strcmp(argv[2], "--help") != 0 && strcmp(argv[2], "-h") != 0) return print_op(argv[2]);
        FILE *fp = argc == 3 ? stdout : stderr;
        fprintf(fp, "usage: kgate new op NAME\n\nPrints a complete op module (docs/ops.md) for a plan's [op NAME] "
                "on stdout: an\nelement-wise sum to change into your op, with the plan lines and a CPU kernel in "
                "its\ncomment (kgate new op NAME > ops/NAME.c).\n\n%s", footer);
        return argc == 3 ? KG_EXIT_PASS : KG_EXIT_USAGE;
    }
    const char *what = NULL, *backend = templates[0].backend, *op = templates[0].op;
    const kg_cli_opt opts[] = {
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &backend,
          .help = "the plan's backend: cpu (default) or cuda" },
        { .name = "op", .arg = "OP", .kind = KG_CLI_STRING, .dst = &op,
          .help = "the op of its case and arms (default gemm_bt); kgate list shows the ops" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "new", .args = "plan | op NAME", .about = about, .opts = opts, .footer = footer,
                               .quiet_help = "accepted as by every command: the template on stdout is this command's "
                               "product, and -q leaves it" };
    int parsed = kg_cli_parse(&spec, argc, argv, &what);
    if (parsed != KG_CLI_GO) return parsed;
    if (strcmp(what, "plan") != 0) {
        fprintf(stderr, "kgate new: unknown kind '%s' (kgate new plan prints a plan template, kgate new op NAME an "
                "op module)\n", what);
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
