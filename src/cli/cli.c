/* cli.c: what every kgate command shares: the option-table parser (on
 * getopt_long) and help printer, library return codes turned into exit
 * statuses (the list is in cli.h) and the --help test. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "kgate/err.h"
#include "kgate/stats.h"

const char kg_cli_exit_text[] =
    "Exit status: 0 gate passed, 1 gate failed or inconclusive, 2 usage or input error (a kernel that\n"
    "does not compile or load included), 3 invalid campaign (control failed, no usable process, or the host never became quiet).\n";

int kg_cli_fail(int rc, const char *msg)
{
    fprintf(stderr, "kgate: %s\n", msg);
    switch (rc) {
    case KG_EUSAGE:
    case KG_EINPUT:
    case KG_EIO:
    case KG_EUNSUPPORTED:
    case KG_EBACKEND: /* a kernel that does not compile or load: input (tests/cli/cli_errors.sh) */
        return KG_EXIT_USAGE;
    default:
        return KG_EXIT_INVALID;
    }
}

void kg_cli_print_report(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/report.md", dir);
    FILE *fp = fopen(path, "r");
    if (fp != NULL) {
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, fp)) > 0) fwrite(buf, 1, n, stdout);
        fclose(fp);
    }
    fflush(stdout);
}

int kg_cli_gate_line(const kg_analysis *an)
{
    fprintf(stderr, "kgate: gate %s%s: %s\n", an->gate_pass ? "PASS" : "FAIL", an->invalid ? " (campaign INVALID)" : "",
            an->gate_reason);
    return an->invalid ? KG_EXIT_INVALID : an->gate_pass ? KG_EXIT_PASS : KG_EXIT_FAIL;
}

int kg_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* ---- help ---- */

#define HELP_WIDTH 100
#define HELP_COL_MAX 22 /* widest option column; a longer one pushes its text along */
#define VAL_LONG 256    /* getopt_long's val for table entry i without a short name: VAL_LONG + i */

static const kg_cli_opt help_opt = { .name = "help", .short_name = 'h', .help = "print this help" };

int kg_cli_quiet = 0;

/* 1 when spec's table has its own -q or --quiet */
static int own_quiet(const kg_cli_spec *spec)
{
    for (const kg_cli_opt *o = spec->opts; o->name != NULL; o++)
        if (o->short_name == 'q' || strcmp(o->name, "quiet") == 0) return 1;
    return 0;
}

/* the -q, --quiet entry of a table without one */
static kg_cli_opt quiet_opt(const kg_cli_spec *spec)
{
    kg_cli_opt q = { .name = "quiet", .short_name = 'q', .kind = KG_CLI_FLAG, .dst = &kg_cli_quiet, .value = 1,
                     .help = spec->quiet_help != NULL ? spec->quiet_help : KG_CLI_QUIET_HELP };
    return q;
}

/* "-o, --out DIR" or "--backend NAME" */
static void opt_label(const kg_cli_opt *o, char *buf, size_t cap)
{
    char sh[8] = "";
    if (o->short_name) snprintf(sh, sizeof sh, "-%c, ", o->short_name);
    snprintf(buf, cap, "%s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Prints text word-wrapped into columns [col, HELP_WIDTH), the cursor
 * being at column at (past col: two spaces, then the text). */
static void wrap(FILE *fp, const char *text, int col, int at)
{
    if (at < col) at += fprintf(fp, "%*s", col - at, "");
    else at += fprintf(fp, "  ");
    int first = 1;
    for (const char *p = text; *p; ) {
        while (*p == ' ') p++;
        int len = (int)strcspn(p, " ");
        if (len == 0) break;
        if (!first && at + 1 + len > HELP_WIDTH) {
            at = fprintf(fp, "\n%*s", col, "") - 1; /* the newline is no column */
            first = 1;
        }
        if (!first) at += fprintf(fp, " ");
        at += fprintf(fp, "%.*s", len, p);
        first = 0;
        p += len;
    }
    fputc('\n', fp);
}

void kg_cli_help(const kg_cli_spec *spec, FILE *fp)
{
    char label[128];
    /* usage line: every option of the table, wrapped under the command */
    int indent = fprintf(fp, "usage: kgate %s", spec->cmd) + 1, at = indent - 1;
    if (spec->args != NULL) at += fprintf(fp, " %s", spec->args);
    for (const kg_cli_opt *o = spec->opts; o->name != NULL; o++) {
        if (o->short_name) snprintf(label, sizeof label, "[-%c%s%s]", o->short_name, o->arg ? " " : "", o->arg ? o->arg : "");
        else snprintf(label, sizeof label, "[--%s%s%s]", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        int len = (int)strlen(label);
        if (at + 1 + len > HELP_WIDTH) at = fprintf(fp, "\n%*s", indent - 1, "") - 1;
        at += fprintf(fp, " %s", label);
    }
    const kg_cli_opt quiet = quiet_opt(spec);
    int builtin_quiet = !own_quiet(spec);
    if (builtin_quiet) {
        if (at + 6 > HELP_WIDTH) fprintf(fp, "\n%*s", indent - 1, "");
        fputs(" [-q]", fp);
    }
    fprintf(fp, "\n\n%s", spec->about);
    /* the options, one entry each */
    int colw = 0;
    for (const kg_cli_opt *o = spec->opts;; o++) {
        const kg_cli_opt *e = o->name != NULL ? o : &help_opt;
        opt_label(e, label, sizeof label);
        int len = (int)strlen(label);
        if (len > colw) colw = len;
        if (o->name == NULL) break;
    }
    if (builtin_quiet) {
        opt_label(&quiet, label, sizeof label);
        if ((int)strlen(label) > colw) colw = (int)strlen(label);
    }
    if (colw > HELP_COL_MAX) colw = HELP_COL_MAX;
    fputs("\noptions:\n", fp);
    for (const kg_cli_opt *o = spec->opts;; o++) {
        if (o->name == NULL && builtin_quiet) {
            opt_label(&quiet, label, sizeof label);
            wrap(fp, quiet.help, colw + 4, fprintf(fp, "  %s", label));
        }
        const kg_cli_opt *e = o->name != NULL ? o : &help_opt;
        opt_label(e, label, sizeof label);
        wrap(fp, e->help, colw + 4, fprintf(fp, "  %s", label));
        if (o->name == NULL) break;
    }
    if (spec->footer != NULL) fprintf(fp, "\n%s", spec->footer);
}

/* ---- parsing ---- */

int kg_cli_read_int(const char *s, long long min, long long max, long long *out)
{
    char *end = NULL;
    errno = 0;
    /* strtoll would skip leading white space */
    long long x = (s[0] == '-' || s[0] == '+' || (s[0] >= '0' && s[0] <= '9')) ? strtoll(s, &end, 10) : 0;
    if (end == NULL || end == s || *end != '\0' || errno == ERANGE || x < min || x > max) return KG_EUSAGE;
    *out = x;
    return KG_OK;
}

int kg_cli_read_real(const char *s, double min, double max, double *out)
{
    char *end = NULL;
    double x = (s[0] != '\0' && s[0] != ' ' && s[0] != '\t' && s[0] != '\n') ? strtod(s, &end) : 0;
    if (end == NULL || end == s || *end != '\0' || !isfinite(x) || x < min || x > max) return KG_EUSAGE;
    *out = x;
    return KG_OK;
}

/* Reads a value into o's destination; on a malformed one says so. */
static int set_value(const kg_cli_spec *spec, const kg_cli_opt *o, const char *v)
{
    if (o->kind == KG_CLI_STRING) {
        *(const char **)o->dst = v;
    } else if (o->kind == KG_CLI_INT) {
        long long x;
        if (kg_cli_read_int(v, (long long)o->min, (long long)o->max, &x) != KG_OK) {
            fprintf(stderr, "kgate %s: --%s needs a whole number from %.0f to %.0f, not '%s'\n", spec->cmd, o->name,
                    o->min, o->max, v);
            return KG_EXIT_USAGE;
        }
        *(int *)o->dst = (int)x;
    } else if (o->kind == KG_CLI_REAL) {
        if (kg_cli_read_real(v, o->min, o->max, (double *)o->dst) != KG_OK) {
            fprintf(stderr, "kgate %s: --%s needs a number from %g to %g, not '%s'\n", spec->cmd, o->name, o->min,
                    o->max, v);
            return KG_EXIT_USAGE;
        }
    } else {
        *(int *)o->dst = o->value;
    }
    if (o->seen != NULL) *o->seen = 1;
    return KG_CLI_GO;
}

static int bad_usage(const kg_cli_spec *spec, const char *what, const char *arg)
{
    fprintf(stderr, "kgate %s: %s '%s' (see kgate %s --help)\n", spec->cmd, what, arg, spec->cmd);
    return KG_EXIT_USAGE;
}

/* The positional arguments: cap at most (one for most commands), and
 * none where spec has none. */
static int take_positional(const kg_cli_spec *spec, const char *arg, const char **pos, int cap, int *npos)
{
    if (spec->args == NULL) return bad_usage(spec, "unexpected argument", arg);
    if (spec->rest != NULL) {
        if (*spec->nrest >= spec->rest_cap) {
            fprintf(stderr, "kgate %s: at most %d arguments (see kgate %s --help)\n", spec->cmd, spec->rest_cap,
                    spec->cmd);
            return KG_EXIT_USAGE;
        }
        spec->rest[(*spec->nrest)++] = arg;
        if (*npos == 0) pos[(*npos)++] = arg;
        return KG_CLI_GO;
    }
    if (*npos >= cap) {
        if (cap == 1)
            fprintf(stderr, "kgate %s: one %s at a time ('%s'; see kgate %s --help)\n", spec->cmd, spec->args, arg,
                    spec->cmd);
        else
            fprintf(stderr, "kgate %s: at most %d arguments ('%s'; see kgate %s --help)\n", spec->cmd, cap, arg,
                    spec->cmd);
        return KG_EXIT_USAGE;
    }
    pos[(*npos)++] = arg;
    return KG_CLI_GO;
}

int kg_cli_parse(const kg_cli_spec *spec, int argc, char **argv, const char **positional)
{
    const char *one = NULL;
    int npos = 0;
    int st = kg_cli_parse_args(spec, argc, argv, &one, 1, &npos);
    if (st == KG_CLI_GO && positional != NULL) *positional = one;
    return st;
}

int kg_cli_parse_args(const kg_cli_spec *spec, int argc, char **argv, const char **positional, int cap, int *npos)
{
    int n = 0;
    while (spec->opts[n].name != NULL) n++;
    const kg_cli_opt quiet = quiet_opt(spec);
    int builtin_quiet = !own_quiet(spec);
    struct option *longs = calloc((size_t)n + 3, sizeof *longs);
    char *shorts = malloc(3 * (size_t)n + 6);
    /* getopt_long may reorder the array it parses (it does without the
     * leading "-" below): it parses a copy, and argv stays as given */
    char **av = malloc(((size_t)argc + 1) * sizeof *av);
    int st = KG_CLI_GO, np = 0;
    const char **pos = calloc((size_t)(cap > 0 ? cap : 1), sizeof *pos);
    if (longs == NULL || pos == NULL || shorts == NULL || av == NULL) {
        fprintf(stderr, "kgate %s: out of memory\n", spec->cmd);
        st = KG_EXIT_USAGE;
        goto done;
    }
    memcpy(av, argv, (size_t)argc * sizeof *av);
    av[argc] = NULL;
    /* "-": positional arguments come back in place (as 1), whatever
     * POSIXLY_CORRECT says; ":": a missing value is told from an unknown
     * option */
    size_t ns = 0;
    shorts[ns++] = '-';
    shorts[ns++] = ':';
    shorts[ns++] = 'h';
    for (int i = 0; i < n; i++) {
        const kg_cli_opt *o = &spec->opts[i];
        longs[i].name = o->name;
        longs[i].has_arg = o->kind == KG_CLI_FLAG ? no_argument : required_argument;
        longs[i].val = o->short_name ? o->short_name : VAL_LONG + i;
        if (o->short_name) {
            shorts[ns++] = o->short_name;
            if (o->kind != KG_CLI_FLAG) shorts[ns++] = ':';
        }
    }
    if (builtin_quiet) shorts[ns++] = 'q';
    shorts[ns] = '\0';
    longs[n].name = "help";
    longs[n].val = 'h';
    if (builtin_quiet) {
        longs[n + 1].name = "quiet";
        longs[n + 1].val = 'q';
    }
    opterr = 0;
    optind = 0; /* glibc: start afresh */
    for (;;) {
        int li = -1;
        int c = getopt_long(argc, av, shorts, longs, &li);
        if (c == -1) break;
        if (c == 1) { /* a positional argument */
            if ((st = take_positional(spec, optarg, pos, cap, &np)) != KG_CLI_GO) goto done;
            continue;
        }
        if (c == '?') {
            const char *el = av[optind - 1];
            if (optopt != 0 && strncmp(el, "--", 2) == 0) /* a known long flag given "=value" */
                st = bad_usage(spec, "this option takes no value:", el);
            else if (optopt != 0) {
                char sh[3] = { '-', (char)optopt, '\0' };
                st = bad_usage(spec, "unknown option", sh);
            } else st = bad_usage(spec, "unknown option", el);
            goto done;
        }
        /* the table entry */
        const kg_cli_opt *o = NULL;
        if (c == ':' || c == 'h') {
            int v = c == ':' ? optopt : c;
            for (int i = 0; i < n && o == NULL; i++)
                if (spec->opts[i].short_name ? spec->opts[i].short_name == v : VAL_LONG + i == v) o = &spec->opts[i];
            if (c == ':') {
                if (o == NULL) { st = bad_usage(spec, "an option needs a value:", av[optind - 1]); goto done; }
                fprintf(stderr, "kgate %s: --%s needs a value %s (see kgate %s --help)\n", spec->cmd, o->name, o->arg,
                        spec->cmd);
                st = KG_EXIT_USAGE;
                goto done;
            }
            if (o == NULL) o = &help_opt;
        } else if (c == 'q' && builtin_quiet) {
            o = &quiet;
        } else if (c >= VAL_LONG && c < VAL_LONG + n) {
            o = &spec->opts[c - VAL_LONG];
        } else {
            for (int i = 0; i < n && o == NULL; i++)
                if (spec->opts[i].short_name == c) o = &spec->opts[i];
        }
        /* long names in full: getopt_long also takes an unambiguous prefix */
        if (li >= 0) {
            const char *el = optarg != NULL && optarg == av[optind - 1] ? av[optind - 2] : av[optind - 1];
            size_t len = strlen(longs[li].name);
            if (strncmp(el, "--", 2) != 0 || strncmp(el + 2, longs[li].name, len) != 0 ||
                (el[2 + len] != '\0' && el[2 + len] != '=')) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(el, "="), el);
                st = bad_usage(spec, "unknown option", name);
                goto done;
            }
        }
        if (o == &help_opt) {
            kg_cli_help(spec, stdout);
            st = KG_EXIT_PASS;
            goto done;
        }
        if ((st = set_value(spec, o, optarg)) != KG_CLI_GO) goto done;
    }
    /* after "--", the rest are positional */
    for (int i = optind; i < argc; i++)
        if ((st = take_positional(spec, av[i], pos, cap, &np)) != KG_CLI_GO) goto done;
    if (spec->args != NULL && np == 0) {
        kg_cli_help(spec, stderr);
        st = KG_EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < np; i++) positional[i] = pos[i];
    *npos = np;
done:
    free(pos);
    free(longs);
    free(shorts);
    free(av);
    return st;
}
