/* expr.h: launch-geometry expressions over case variables.
 *
 * A GPU arm declares its grid, block and dynamic shared bytes as integer
 * expressions, e.g. grid = "ceildiv(N, 64), ceildiv(M, 64)".  The grammar:
 *
 *   list    := expr { ',' expr }
 *   expr    := term { ('+' | '-') term }
 *   term    := unary { ('*' | '/' | '%') unary }
 *   unary   := '-' unary | primary
 *   primary := INTEGER | NAME | FUNC '(' expr ',' expr ')' | '(' expr ')'
 *   NAME    := M | N | K | splits          FUNC := ceildiv | min | max
 *   cond    := expr ('==' | '!=' | '<' | '<=' | '>' | '>=') expr   (requires)
 *
 * Arithmetic is int64 with overflow, division by zero and negative
 * operands of '/' '%' ceildiv reported as errors (truncating division of
 * negative numbers is a classic source of silent geometry bugs).  Every
 * message names what is evaluated ("grid"), quotes the expression and
 * gives the 1-based column of the problem.
 *
 * This module does not know launch limits (block <= 1024 threads etc.):
 * the backend checks those against the device. */
#ifndef KGATE_EXPR_H
#define KGATE_EXPR_H

#include <stdint.h>
#include "kgate/err.h"
#include "kgate/plan.h"

/* Evaluates one expression over the variables of case c.  what names the
 * expression in messages ("shared").  A variable the case does not set
 * (-1) is an error naming the case.  Returns KG_OK or KG_EINPUT. */
int kg_expr_eval(const char *what, const char *text, const kg_case *c, int64_t *out,
                 kg_err *err);

/* Evaluates a comma-separated list of at most max expressions into
 * out[0..max-1]; positions not given are set to fill (1 for grid and
 * block dimensions).  An empty text gives every position fill and *n = 0.
 * *n (may be NULL) receives how many were given. */
int kg_expr_eval_list(const char *what, const char *text, const kg_case *c, int64_t *out,
                      int max, int64_t fill, int *n, kg_err *err);

/* Checks the syntax of a list (names, functions, parentheses) without a
 * case, for plan validation.  Arithmetic errors are not reported since
 * they depend on the case. */
int kg_expr_check_list(const char *what, const char *text, int max, kg_err *err);

/* Conditions over case variables, an arm's preconditions (`requires = K %
 * 16 == 0, N % 64 == 0`): a comma-separated list of `expr OP expr` with
 * OP one of == != < <= > >=.  *ok = 1 when every condition holds for case
 * c; otherwise 0, and failed (may be NULL) receives the first that does
 * not, with both sides' values ("K % 16 == 0 (13 against 0)").  An empty
 * text holds.  Errors as kg_expr_eval. */
int kg_expr_eval_conds(const char *what, const char *text, const kg_case *c, int *ok, char *failed,
                       size_t cap, kg_err *err);
/* The syntax of a condition list, without a case. */
int kg_expr_check_conds(const char *what, const char *text, kg_err *err);

#endif
