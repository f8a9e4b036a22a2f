/* noop.c: a stand-in kernel source for the plan parser's tests; the tests
 * only check that the path resolves, nothing compiles it. */
void kernel(void);
void kernel(void) {}
