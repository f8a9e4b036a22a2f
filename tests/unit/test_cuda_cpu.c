/* test_cuda_cpu.c: the host side of the cuda backend, without a GPU.
 *
 * Library loaders fail cleanly (simulated with the settings' lib_*
 * overrides, KGATE_LIB*, and for real where no driver is installed); the
 * driver probe of kgate list; argument lists and launch
 * geometry of the shipped gemm_bt kernels and of launch chains; the
 * row-major to column-major mapping of builtin = cublas, checked against
 * a host emulation of cuBLASLt's documented semantics; and, where NVRTC
 * is installed (it needs no GPU), compiling the shipped kernels and a
 * broken one. */
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <unistd.h>
#include "check.h"
#include "backend/backend_impl.h"
#include "backend/cuda_api.h"
#include "backend/launch.h"

static const char *const gemm_in[] = { "A", "B" };
static const char *const gemm_out[] = { "C" };

static kg_case gemm_case(int64_t M, int64_t N, int64_t K)
{
    kg_case c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tall");
    strcpy(c.op, "gemm_bt");
    c.dtype = KG_DT_BF16;
    c.M = M; c.N = N; c.K = K; c.splits = -1;
    c.eps = 1e-5;
    c.scale = 1.0;
    c.primary = 1;
    return c;
}

static kg_arm gemm_arm(const char *name, const char *source, const char *entry, const char *grid,
                       const char *block, const char *shared)
{
    kg_arm a;
    memset(&a, 0, sizeof a);
    strcpy(a.name, name);
    strcpy(a.op, "gemm_bt");
    strcpy(a.source, source);
    strcpy(a.entry, entry);
    strcpy(a.grid, grid);
    strcpy(a.block, block);
    strcpy(a.shared, shared);
    strcpy(a.args, "A, B, C, M, N, K");
    return a;
}

static void test_loaders(void)
{
    kg_err err = { 0 };
    kg_settings s = *kg_settings_defaults();
    kg_cuda_driver d;
    s.lib_cuda = "/nonexistent/libcuda.so.1";
    CHECK(kg_cuda_driver_load(&d, &s, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "no CUDA driver found: /nonexistent/libcuda.so.1");
    CHECK_STR_CONTAINS(err.msg, "use backend = cpu");
    CHECK(d.lib == NULL && d.cuInit == NULL);
    kg_cuda_driver_unload(&d);   /* idempotent on a failed load */
    kg_cuda_driver_unload(NULL);

    /* the backend itself: open fails with the same message, close of the
     * half-open backend is safe */
    kg_backend be = { .ops = &kg_backend_cuda, .settings = &s };
    kg_err_clear(&err);
    CHECK(kg_backend_cuda.open(&be, NULL, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "no CUDA driver found");
    kg_backend_cuda.close(&be);
    CHECK(be.ctx == NULL);
    CHECK(kg_cuda_driver_present(&s) == 0);
    s.lib_cuda = NULL;

    /* where no driver is installed (CI, this kind of machine), the real
     * name gives the dlerror() text a user recognises */
    void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (real == NULL) {
        kg_err_clear(&err);
        kg_backend be2 = { .ops = &kg_backend_cuda, .settings = &s };
        CHECK(kg_backend_cuda.open(&be2, NULL, &err) == KG_EUNSUPPORTED);
        CHECK_STR_CONTAINS(err.msg, "no CUDA driver found: libcuda.so.1: cannot open shared object file");
        CHECK_STR_CONTAINS(err.msg, "use backend = cpu");
        kg_backend_cuda.close(&be2);
        CHECK(kg_cuda_driver_present(&s) == 0);
    } else {
        dlclose(real);
        fprintf(stderr, "test_cuda_cpu: libcuda.so.1 present, real-absence check skipped\n");
    }

    kg_cuda_nvrtc n;
    kg_err_clear(&err);
    s.lib_nvrtc = "/nonexistent/libnvrtc.so";
    CHECK(kg_cuda_nvrtc_load(&n, &s, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "no NVRTC found: /nonexistent/libnvrtc.so");
    CHECK(n.lib == NULL);
    s.lib_nvrtc = NULL;

    kg_cuda_nvml m;
    kg_err_clear(&err);
    s.lib_nvml = "/nonexistent/libnvidia-ml.so.1";
    CHECK(kg_cuda_nvml_load(&m, &s, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "no NVML found");
    s.lib_nvml = NULL;

    kg_cuda_cublaslt lt;
    kg_err_clear(&err);
    s.lib_cublaslt = "/nonexistent/libcublasLt.so";
    CHECK(kg_cuda_cublaslt_load(&lt, &s, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "no cuBLASLt found");
    s.lib_cublaslt = NULL;

    /* a library that opens but lacks the symbols: libm is no driver */
    kg_err_clear(&err);
    s.lib_cuda = "libm.so.6";
    CHECK(kg_cuda_driver_load(&d, &s, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "libm.so.6 lacks cuInit");
    CHECK(d.lib == NULL);
    s.lib_cuda = NULL;

    /* cuBLASLt, where installed: every symbol resolves */
    kg_err_clear(&err);
    if (kg_cuda_cublaslt_load(&lt, &s, &err) == KG_OK) {
        CHECK(lt.cublasLtMatmul != NULL && lt.cublasLtMatmulAlgoGetHeuristic != NULL);
        CHECK(lt.cublasLtGetVersion() > 0);
        kg_cuda_cublaslt_unload(&lt);
        CHECK(lt.lib == NULL);
    }
}

static void test_args(void)
{
    kg_case c = gemm_case(96, 512, 2048);
    kg_carg args[KG_LAUNCH_MAX_ARGS];
    int n = -1;
    kg_err err = { 0 };
    CHECK(kg_launch_args_parse("dev", "A, B, C, M, N, K", gemm_in, 2, gemm_out, 1, &c, args, &n,
                             &err) == KG_OK);
    CHECK(n == 6);
    CHECK(args[0].kind == KG_CARG_IN && args[0].index == 0);
    CHECK(args[1].kind == KG_CARG_IN && args[1].index == 1);
    CHECK(args[2].kind == KG_CARG_OUT && args[2].index == 0);
    CHECK(args[3].kind == KG_CARG_I32 && args[3].value.i32 == 96);
    CHECK(args[4].kind == KG_CARG_I32 && args[4].value.i32 == 512);
    CHECK(args[5].kind == KG_CARG_I32 && args[5].value.i32 == 2048);

    /* spaces separate too; suffixes pick the width */
    CHECK(kg_launch_args_parse("dev", "C A  B K:i64 eps eps:f64 ws M:i32", gemm_in, 2, gemm_out, 1,
                             &c, args, &n, &err) == KG_OK);
    CHECK(n == 8);
    CHECK(args[0].kind == KG_CARG_OUT && args[1].kind == KG_CARG_IN && args[2].index == 1);
    CHECK(args[3].kind == KG_CARG_I64 && args[3].value.i64 == 2048);
    CHECK(args[4].kind == KG_CARG_F32 && args[4].value.f32 == 1e-5f);
    CHECK(args[5].kind == KG_CARG_F64 && args[5].value.f64 == 1e-5);
    CHECK(args[6].kind == KG_CARG_WS);
    CHECK(args[7].kind == KG_CARG_I32 && args[7].value.i32 == 96);
    /* null: a null pointer, 8 zero bytes (Triton's trailing scratch pointers) */
    CHECK(kg_launch_args_parse("dev", "A, C, M, null, null", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) == KG_OK);
    CHECK(n == 5);
    CHECK(args[3].kind == KG_CARG_I64 && args[3].value.i64 == 0 && args[4].kind == KG_CARG_I64);
    CHECK(kg_launch_args_parse("dev", "A, null:i32", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) != KG_OK);
    kg_err_clear(&err);
    /* values: integer expressions over the variables (commas inside parentheses), real literals */
    CHECK(kg_launch_args_parse("dev", "A, C, M*K, ceildiv(M, 64), (M+1)*2:i64, 0.5, 1e-3:f64, 7", gemm_in, 2,
                             gemm_out, 1, &c, args, &n, &err) == KG_OK);
    CHECK(n == 8);
    CHECK(args[2].kind == KG_CARG_I32 && args[2].value.i32 == 96 * 2048);
    CHECK(args[3].kind == KG_CARG_I32 && args[3].value.i32 == 2);
    CHECK(args[4].kind == KG_CARG_I64 && args[4].value.i64 == 194);
    CHECK(args[5].kind == KG_CARG_F32 && args[5].value.f32 == 0.5f);
    CHECK(args[6].kind == KG_CARG_F64 && args[6].value.f64 == 1e-3);
    CHECK(args[7].kind == KG_CARG_I32 && args[7].value.i32 == 7);
    CHECK(kg_launch_args_parse("dev", "A, M*Q", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) == KG_EINPUT);
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("dev", "A, M*K*K*K", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "does not fit a 32-bit int");
    kg_err_clear(&err);
    /* the workspace is WS in the vocabulary (ws is accepted too) */
    CHECK(kg_launch_args_parse("dev", "WS, C, splits:i64", gemm_in, 2, gemm_out, 1, &c, args, &n,
                             &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "does not set splits");
    kg_err_clear(&err);
    kg_case sc = c;
    sc.splits = 4;
    CHECK(kg_launch_args_parse("dev", "WS, C, splits:i64, splits", gemm_in, 2, gemm_out, 1, &sc,
                             args, &n, &err) == KG_OK);
    CHECK(n == 4 && args[0].kind == KG_CARG_WS && args[1].kind == KG_CARG_OUT);
    CHECK(args[2].kind == KG_CARG_I64 && args[2].value.i64 == 4);
    CHECK(args[3].kind == KG_CARG_I32 && args[3].value.i32 == 4);
    CHECK(kg_launch_args_parse("dev", "WS:i32", gemm_in, 2, gemm_out, 1, &sc, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "a buffer takes no type suffix");
    kg_err_clear(&err);

    CHECK(kg_launch_args_parse("cand", "A, B, Q", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "arm 'cand': unknown argument 'Q'");
    CHECK_STR_CONTAINS(err.msg, "A B C WS M N K splits eps");
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", "A:i64", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "a buffer takes no type suffix");
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", "A, splits", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "case 'tall' does not set splits");
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", "M:u8", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "unknown suffix ':u8'");
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", " , ", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "args is empty");
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", "A A A A A A A A A A A A A A A A A", gemm_in, 2, gemm_out, 1,
                             &c, args, &n, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "more than 16 kernel arguments");

    kg_case big = gemm_case(3000000000LL, 4, 4);
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", "A, M", gemm_in, 2, gemm_out, 1, &big, args, &n, &err) ==
          KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "does not fit a 32-bit int");
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("cand", "A, M:i64", gemm_in, 2, gemm_out, 1, &big, args, &n, &err) ==
          KG_OK);
    CHECK(args[1].value.i64 == 3000000000LL);

    /* tensor maps: NAME:tmap:RxC[:swN] of an input or output; the case's
     * matrix and the TMA's rules from kg_launch_tmap_shape */
    kg_err_clear(&err);
    CHECK(kg_launch_args_parse("dev", "A:tmap:64x64:sw128, B:tmap:16x32, C:tmap:8x4, M", gemm_in, 2, gemm_out, 1, &c,
                               args, &n, &err) == KG_OK);
    CHECK(n == 4);
    CHECK(args[0].kind == KG_CARG_TMAP && args[0].index == 0 && !args[0].tmap.out && args[0].tmap.box[0] == 64 &&
          args[0].tmap.box[1] == 64 && args[0].tmap.swizzle == 128);
    CHECK(args[1].kind == KG_CARG_TMAP && args[1].index == 1 && args[1].tmap.swizzle == 0 &&
          args[1].tmap.box[0] == 16 && args[1].tmap.box[1] == 32);
    CHECK(args[2].kind == KG_CARG_TMAP && args[2].tmap.out && args[2].index == 0);
    int64_t dims[2] = { 96, 2048 };
    CHECK(kg_launch_tmap_shape("dev", &c, &args[0], dims, 2, KG_DT_BF16, &err) == KG_OK);
    CHECK(args[0].tmap.rows == 96 && args[0].tmap.cols == 2048 && args[0].tmap.elem_bytes == 2);
    /* 64 f32 columns are 256 bytes, wider than the 128-byte swizzle */
    CHECK(kg_launch_tmap_shape("dev", &c, &args[0], dims, 2, KG_DT_F32, &err) == KG_EINADMISSIBLE);
    CHECK_STR_CONTAINS(err.msg, "wider than the 128-byte swizzle");
    kg_err_clear(&err);
    int64_t odd[3] = { 2, 3, 30 };   /* rows 6, a 60-byte pitch */
    CHECK(kg_launch_tmap_shape("dev", &c, &args[1], odd, 3, KG_DT_F16, &err) == KG_EINADMISSIBLE);
    CHECK_STR_CONTAINS(err.msg, "row pitch, 30 columns x 2 bytes, is not a multiple of 16 bytes");
    kg_err_clear(&err);
    int64_t three[3] = { 2, 3, 32 };
    CHECK(kg_launch_tmap_shape("dev", &c, &args[1], three, 3, KG_DT_F16, &err) == KG_OK);
    CHECK(args[1].tmap.rows == 6 && args[1].tmap.cols == 32);
    /* a 4-column f32 box row is 16 bytes; 2 columns are 8 */
    CHECK(kg_launch_tmap_shape("dev", &c, &args[2], dims, 2, KG_DT_F32, &err) == KG_OK);
    CHECK(kg_launch_args_parse("dev", "A:tmap:8x2", gemm_in, 2, gemm_out, 1, &c, args, &n, &err) == KG_OK);
    CHECK(kg_launch_tmap_shape("dev", &c, &args[0], dims, 2, KG_DT_F32, &err) == KG_EINADMISSIBLE);
    CHECK_STR_CONTAINS(err.msg, "a box row, 2 columns x 4 bytes, is not a multiple of 16 bytes");
    const char *bad[] = { "A:tmap:0x16", "A:tmap:257x16", "A:tmap:16x16:sw16", "A:tmap:16x16:", "A:tmap:16",
                          "A:tmap:-1x16", "ws:tmap:16x16", "M:tmap:16x16", "A:tmapx" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kg_err_clear(&err);
        CHECK(kg_launch_args_parse("dev", bad[i], gemm_in, 2, gemm_out, 1, &c, args, &n, &err) == KG_EINPUT);
    }
}

static void test_geometry(void)
{
    kg_case c = gemm_case(96, 512, 2048);
    kg_launch_geom g;
    kg_err err = { 0 };
    kg_arm naive = gemm_arm("dev", "kernels/cuda/gemm_bt_naive.cu", "gemm_bt_naive",
                            "ceildiv(N, 16), ceildiv(M, 16)", "16, 16", "");
    CHECK(kg_launch_geometry(&naive, &c, &g, &err) == KG_OK);
    CHECK(g.grid[0] == 32 && g.grid[1] == 6 && g.grid[2] == 1);
    CHECK(g.block[0] == 16 && g.block[1] == 16 && g.block[2] == 1);
    CHECK(g.shared_bytes == 0);

    kg_arm tiled = gemm_arm("cand", "kernels/cuda/gemm_bt_tiled.cu", "gemm_bt_tiled",
                            "ceildiv(N, 32), ceildiv(M, 32)", "32, 8", "2 * 32 * 33 * 4");
    kg_case odd = gemm_case(97, 500, 33);
    CHECK(kg_launch_geometry(&tiled, &odd, &g, &err) == KG_OK);
    CHECK(g.grid[0] == 16 && g.grid[1] == 4 && g.grid[2] == 1);
    CHECK(g.block[0] == 32 && g.block[1] == 8 && g.block[2] == 1);
    CHECK(g.shared_bytes == 8448);

    kg_arm bad = tiled;
    strcpy(bad.block, "64, 32");
    CHECK(kg_launch_geometry(&bad, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "block (64, 32, 1) exceeds the CUDA limits");
    kg_err_clear(&err);
    strcpy(bad.block, "32, 8");
    strcpy(bad.grid, "N - 512");
    CHECK(kg_launch_geometry(&bad, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "grid.x is 0");
    kg_err_clear(&err);
    strcpy(bad.grid, "");
    CHECK(kg_launch_geometry(&bad, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "grid is empty");
    kg_err_clear(&err);
    strcpy(bad.grid, "1, 70000");
    CHECK(kg_launch_geometry(&bad, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "exceeds the CUDA limits");
    kg_err_clear(&err);
    strcpy(bad.grid, "ceildiv(N, 32");
    CHECK(kg_launch_geometry(&bad, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "arm 'cand' grid expression");
    kg_err_clear(&err);
    strcpy(bad.grid, "1");
    strcpy(bad.shared, "0 - 4");
    CHECK(kg_launch_geometry(&bad, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "shared = -4 bytes");
}

/* Launches 2 and 3 of a chain: their own keys, messages that name them,
 * and no gaps in the numbering. */
static void test_chain(void)
{
    kg_case c = gemm_case(96, 512, 2048);
    c.splits = 4;
    kg_launch_geom g;
    kg_err err = { 0 };
    int n = 0;
    kg_arm a = gemm_arm("splitk", "tests/gpu/gemm_bt_splitk.cu", "zero_c", "ceildiv(M * N, 256)",
                        "256", "");
    CHECK(kg_launch_chain_length(&a, &n, &err) == KG_OK && n == 1);
    strcpy(a.extra[0].entry, "partial");
    strcpy(a.extra[0].grid, "ceildiv(N, 32), ceildiv(M, 32), splits");
    strcpy(a.extra[0].block, "32, 8");
    strcpy(a.extra[0].shared, "2 * 32 * 33 * 4");
    CHECK(kg_launch_chain_length(&a, &n, &err) == KG_OK && n == 2);
    CHECK(kg_launch_geometry_at(&a, 1, &c, &g, &err) == KG_OK);
    CHECK(g.grid[0] == 192 && g.block[0] == 256 && g.shared_bytes == 0);
    CHECK(kg_launch_geometry_at(&a, 2, &c, &g, &err) == KG_OK);
    CHECK(g.grid[0] == 16 && g.grid[1] == 3 && g.grid[2] == 4);
    CHECK(g.block[0] == 32 && g.block[1] == 8 && g.shared_bytes == 8448);
    /* launch 3 declared without a grid: the message names grid3 */
    strcpy(a.extra[1].entry, "finish");
    CHECK(kg_launch_chain_length(&a, &n, &err) == KG_OK && n == 3);
    CHECK(kg_launch_geometry_at(&a, 3, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "grid3 is empty");
    kg_err_clear(&err);
    strcpy(a.extra[1].grid, "1");
    strcpy(a.extra[1].block, "2048");
    CHECK(kg_launch_geometry_at(&a, 3, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "block3 (2048, 1, 1) exceeds the CUDA limits");
    kg_err_clear(&err);
    strcpy(a.extra[1].block, "ceildiv(K, 0)");
    CHECK(kg_launch_geometry_at(&a, 3, &c, &g, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "arm 'splitk' block3 expression");
    kg_err_clear(&err);
    CHECK(kg_launch_geometry_at(&a, 4, &c, &g, &err) == KG_EINTERNAL);
    kg_err_clear(&err);
    /* entry3 without entry2 */
    a.extra[0].entry[0] = '\0';
    CHECK(kg_launch_chain_length(&a, &n, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "entry3 is set but entry2 is not");
}

/* cuBLASLt's contract, emulated on the host: column-major storage,
 * element (r, c) of a stored rows x cols matrix at r + c * ld, op T
 * transposes; D[m x n] = op(A) * op(B). */
static double lt_elem(const double *p, int64_t ld, int trans, uint64_t r, uint64_t c)
{
    /* op(X)(r, c) = X(r, c) or X(c, r) */
    return trans == KG_CUBLAS_OP_T ? p[c + r * (uint64_t)ld] : p[r + c * (uint64_t)ld];
}

static void lt_emulate(const kg_cuda_gemm_map *m, const double *a, const double *b, double *d)
{
    for (uint64_t c = 0; c < m->n; c++)
        for (uint64_t r = 0; r < m->m; r++) {
            double acc = 0.0;
            for (uint64_t k = 0; k < m->k; k++)
                acc += lt_elem(a, m->lda, m->transa, r, k) * lt_elem(b, m->ldb, m->transb, k, c);
            d[r + c * (uint64_t)m->ldd] = acc;
        }
}

static void test_gemm_map(void)
{
    kg_err err = { 0 };
    kg_cuda_gemm_map m;
    /* distinct sizes so that any swapped dimension shows */
    enum { M = 5, N = 3, K = 7 };
    kg_case c = gemm_case(M, N, K);
    CHECK(kg_cuda_gemm_map_case("ref", &c, NULL, &m, &err) == KG_OK);
    CHECK(m.in_type == KG_CUDA_R_16BF && m.out_type == KG_CUDA_R_32F);
    CHECK(m.compute_type == KG_CUBLAS_COMPUTE_32F);
    /* the stored layouts must describe exactly the op's buffers */
    CHECK(m.a_rows * m.a_cols == (uint64_t)(m.a_input == 0 ? M * K : N * K));
    CHECK(m.b_rows * m.b_cols == (uint64_t)(m.b_input == 0 ? M * K : N * K));
    CHECK(m.d_rows * m.d_cols == (uint64_t)(M * N) && m.ldd == (int64_t)m.d_rows);
    CHECK(m.lda >= (int64_t)m.a_rows && m.ldb >= (int64_t)m.b_rows);
    /* op(A) is m x k, op(B) k x n, D m x n */
    CHECK((m.transa == KG_CUBLAS_OP_N ? m.a_rows : m.a_cols) == m.m);
    CHECK((m.transb == KG_CUBLAS_OP_N ? m.b_cols : m.b_rows) == m.n);
    CHECK(m.d_rows == m.m && m.d_cols == m.n);

    /* the numbers: row-major A[M,K], B[N,K]; C[M,N] = A * B^T */
    double A[M * K], B[N * K], want[M * N], got[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (double)((i * 7) % 11) - 5.0;
    for (int i = 0; i < N * K; i++) B[i] = (double)((i * 5) % 13) - 6.0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[j * K + k];
            want[i * N + j] = acc;
        }
    const double *in[2] = { A, B };
    for (int i = 0; i < M * N; i++) got[i] = -1e300;
    lt_emulate(&m, in[m.a_input], in[m.b_input], got);
    int same = 1;
    for (int i = 0; i < M * N; i++) same &= got[i] == want[i];
    CHECK_MSG(same, "cuBLASLt mapping does not compute row-major A * B^T");

    /* gemm_nt: B is stored [K,N]; C = A * B */
    kg_case ntc = c;
    strcpy(ntc.op, "gemm_nt");
    CHECK(kg_cuda_gemm_map_case("ref", &ntc, NULL, &m, &err) == KG_OK);
    CHECK(m.a_rows * m.a_cols == (uint64_t)(N * K) && m.lda >= (int64_t)m.a_rows);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[k * N + j];
            want[i * N + j] = acc;
        }
    for (int i = 0; i < M * N; i++) got[i] = -1e300;
    lt_emulate(&m, in[m.a_input], in[m.b_input], got);
    same = 1;
    for (int i = 0; i < M * N; i++) same &= got[i] == want[i];
    CHECK_MSG(same, "cuBLASLt mapping does not compute row-major A * B for gemm_nt");
    /* gemm_splitk has gemm_bt's contract */
    kg_case skc = c;
    strcpy(skc.op, "gemm_splitk");
    kg_cuda_gemm_map bt_map, sk_map;
    CHECK(kg_cuda_gemm_map_case("ref", &c, NULL, &bt_map, &err) == KG_OK);
    CHECK(kg_cuda_gemm_map_case("ref", &skc, NULL, &sk_map, &err) == KG_OK);
    CHECK(memcmp(&bt_map, &sk_map, sizeof bt_map) == 0);

    c.dtype = KG_DT_F32;
    CHECK(kg_cuda_gemm_map_case("ref", &c, NULL, &m, &err) == KG_OK && m.in_type == KG_CUDA_R_32F);
    CHECK(m.compute_type == KG_CUBLAS_COMPUTE_32F);
    /* TF32 only under a tf32 contract, and only for f32 inputs */
    kg_contract tf = { KG_PREC_TF32, 0.0 }, f16acc = { KG_PREC_F16ACC, 0.0 };
    CHECK(kg_cuda_gemm_map_case("ref", &c, &tf, &m, &err) == KG_OK && m.compute_type == KG_CUBLAS_COMPUTE_32F_FAST_TF32);
    CHECK(kg_cuda_gemm_map_case("ref", &c, &f16acc, &m, &err) == KG_OK && m.compute_type == KG_CUBLAS_COMPUTE_32F);
    c.dtype = KG_DT_F16;
    CHECK(kg_cuda_gemm_map_case("ref", &c, NULL, &m, &err) == KG_OK && m.in_type == KG_CUDA_R_16F);
    CHECK(kg_cuda_gemm_map_case("ref", &c, &tf, &m, &err) == KG_OK && m.compute_type == KG_CUBLAS_COMPUTE_32F);
    kg_case r = c;
    strcpy(r.op, "rowsum");
    CHECK(kg_cuda_gemm_map_case("ref", &r, NULL, &m, &err) == KG_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.msg, "not op 'rowsum'");
    kg_err_clear(&err);
    kg_case nok = gemm_case(4, 4, -1);
    CHECK(kg_cuda_gemm_map_case("ref", &nok, NULL, &m, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "must set M, N and K");
}

static void test_uuid(void)
{
    CUuuid u;
    for (int i = 0; i < 16; i++) u.bytes[i] = (char)(0xa0 + i);
    char buf[64];
    kg_cuda_uuid_text(&u, buf, sizeof buf);
    CHECK(strcmp(buf, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf") == 0);
}

/* NVRTC needs no GPU: where it is installed, the shipped kernels compile
 * for every dtype and a broken kernel reports the arm and the log. */
static void test_compile(void)
{
    kg_cuda_nvrtc nv;
    kg_err err = { 0 };
    /* the toolkit where the environment says (as the command line reads it) */
    kg_settings s = *kg_settings_defaults();
    s.cuda_home = getenv("CUDA_HOME") != NULL && getenv("CUDA_HOME")[0] ? getenv("CUDA_HOME") : getenv("CUDA_PATH");
    s.cuda_path = getenv("CUDA_PATH");
    if (kg_cuda_nvrtc_load(&nv, &s, &err) != KG_OK) {
        fprintf(stderr, "test_cuda_cpu: NVRTC absent, compile checks skipped (%s)\n", err.msg);
        return;
    }
    kg_plan plan;
    memset(&plan, 0, sizeof plan);
    strcpy(plan.base_dir, ".");
    kg_arm arms[3];
    arms[0] = gemm_arm("dev", "kernels/cuda/gemm_bt_naive.cu", "gemm_bt_naive",
                       "ceildiv(N, 16), ceildiv(M, 16)", "16, 16", "");
    arms[1] = gemm_arm("cand", "kernels/cuda/gemm_bt_tiled.cu", "gemm_bt_tiled",
                       "ceildiv(N, 32), ceildiv(M, 32)", "32, 8", "2 * 32 * 33 * 4");
    arms[2] = gemm_arm("missing", "tests/fixtures/no_such_kernel.cu", "k", "1", "1", "");
    plan.arms = arms;
    plan.narms = 3;
    s.include_dir = "include";
    for (int a = 0; a < 2; a++) {
        for (int dt = 0; dt < 3; dt++) {
            char *image = NULL;
            size_t bytes = 0;
            kg_err_clear(&err);
            int rc = kg_cuda_compile(&nv, &s, 9, 0, &plan, a, (kg_dtype)dt, &image, &bytes, &err);
            CHECK_MSG(rc == KG_OK, "%s dtype %d: %s", arms[a].name, dt, err.msg);
            /* a cubin is an ELF image */
            CHECK(image != NULL && bytes > 64 && memcmp(image, "\177ELF", 4) == 0);
            free(image);
        }
    }
    /* the GPU tests' own kernels compile too: the three-launch chain, the
     * neighbour-scanning attack (both reaches) and the refused launches */
    {
        kg_arm keep = arms[2];
        static const char *const gpu_src[][2] = {
            { "tests/gpu/gemm_bt_splitk.cu", "" },
            { "tests/gpu/isolation_neighbour.cu", "REACH=0" },
            { "tests/gpu/isolation_neighbour.cu", "REACH=4" },
            { "tests/gpu/refused_launch.cu", "" },
        };
        for (size_t g = 0; g < sizeof gpu_src / sizeof gpu_src[0]; g++) {
            arms[2] = gemm_arm("gpu_test", gpu_src[g][0], "k", "1", "1", "");
            snprintf(arms[2].defines, sizeof arms[2].defines, "%s", gpu_src[g][1]);
            for (int dt = 0; dt < 3; dt++) {
                char *img = NULL;
                size_t nb = 0;
                kg_err_clear(&err);
                int rc = kg_cuda_compile(&nv, &s, 9, 0, &plan, 2, (kg_dtype)dt, &img, &nb, &err);
                CHECK_MSG(rc == KG_OK, "%s dtype %d: %s", gpu_src[g][0], dt, err.msg);
                CHECK(img != NULL && nb > 64 && memcmp(img, "\177ELF", 4) == 0);
                free(img);
            }
        }
        /* the kernels of the declared ops, for every case dtype (the
         * device conversions of f64, i32, i8, e4m3 and e5m2 inputs), and
         * the FP8 kernel specialized for a case: -DKG_VAR_K=... */
        static const char *const op_src[] = { "kernels/cuda/conv1d.cu", "kernels/cuda/gemm_i8.cu",
                                              "kernels/cuda/gemm_fp8.cu" };
        for (size_t g = 0; g < sizeof op_src / sizeof op_src[0]; g++) {
            arms[2] = gemm_arm("op_test", op_src[g], "k", "1", "1", "");
            for (int dt = 0; dt < KG_DT_COUNT; dt++) {
                char *img = NULL;
                size_t nb = 0;
                kg_err_clear(&err);
                int rc = kg_cuda_compile(&nv, &s, 9, 0, &plan, 2, (kg_dtype)dt, &img, &nb, &err);
                CHECK_MSG(rc == KG_OK, "%s dtype %d: %s", op_src[g], dt, err.msg);
                free(img);
            }
        }
        {
            kg_case cs;
            memset(&cs, 0, sizeof cs);
            snprintf(cs.name, sizeof cs.name, "f8");
            cs.dtype = KG_DT_E4M3;
            cs.M = 4;
            cs.N = 8;
            cs.K = 96;
            cs.splits = -1;
            cs.eps = 1e-5;
            cs.nvars = 1;
            snprintf(cs.vars[0].name, sizeof cs.vars[0].name, "alpha");
            cs.vars[0].type = KG_VAR_REAL;
            cs.vars[0].r = 2.0;
            arms[2] = gemm_arm("op_test", "kernels/cuda/gemm_fp8.cu", "gemm_fp8_smem", "1", "1", "");
            /* specialized: the static array needs KG_VAR_K; unspecialized it is the extern one */
            arms[2].specialize = 1;
            char *img = NULL;
            size_t nb = 0;
            kg_err_clear(&err);
            int rc = kg_cuda_compile_case(&nv, &s, 9, 0, &plan, 2, &cs, cs.dtype, &img, &nb, &err);
            CHECK_MSG(rc == KG_OK, "specialized gemm_fp8: %s", err.msg);
            free(img);
            /* the defines are there: a kernel that requires them compiles only when specialized */
            arms[2] = gemm_arm("op_test", "tests/gpu/specialize_probe.cu", "k", "1", "1", "");
            arms[2].specialize = 1;
            img = NULL;
            kg_err_clear(&err);
            rc = kg_cuda_compile_case(&nv, &s, 9, 0, &plan, 2, &cs, cs.dtype, &img, &nb, &err);
            CHECK_MSG(rc == KG_OK, "specialize_probe with the case's variables: %s", err.msg);
            free(img);
            arms[2].specialize = 0;
            img = NULL;
            kg_err_clear(&err);
            rc = kg_cuda_compile_case(&nv, &s, 9, 0, &plan, 2, &cs, cs.dtype, &img, &nb, &err);
            CHECK(rc == KG_EBACKEND);
            CHECK_STR_CONTAINS(err.msg, "KG_VAR_K is not defined");
            free(img);
        }
        arms[2] = keep;
    }
    /* a defined-away entry must fail to compile with the log in the message */
    char *image = NULL;
    size_t bytes = 0;
    kg_err_clear(&err);
    strcpy(arms[0].defines, "KG_DTYPE=9");
    CHECK(kg_cuda_compile(&nv, &s, 9, 0, &plan, 0, KG_DT_F32, &image, &bytes, &err) == KG_EBACKEND);
    CHECK_STR_CONTAINS(err.msg, "arm 'dev': NVRTC could not compile");
    CHECK_STR_CONTAINS(err.msg, "gemm_bt_naive.cu for sm_90");
    CHECK_STR_CONTAINS(err.msg, "KG_DTYPE must be 0 (f32), 1 (f16), 2 (bf16), 3 (f64), 4 (i32), 5 (i8), 6 (e4m3) or 7 (e5m2)");
    CHECK(image == NULL);
    arms[0].defines[0] = '\0';

    /* a missing source names the path */
    kg_err_clear(&err);
    {
        int rc = kg_cuda_compile(&nv, &s, 9, 0, &plan, 2, KG_DT_F32, &image, &bytes, &err);
        /* the plan module checks the path (input error); reading it is I/O */
        CHECK_MSG(rc == KG_EINPUT || rc == KG_EIO, "rc %d: %s", rc, err.msg);
        CHECK(image == NULL);
    }
    CHECK_STR_CONTAINS(err.msg, "tests/fixtures/no_such_kernel.cu");
    /* the toolkit headers: found, and usable together with the
     * fixed-width types kgate/kernel.h declares for NVRTC */
    char tmpl[] = "/tmp/kgate_fp16_XXXXXX";
    int fd = mkstemp(tmpl);
    CHECK(fd >= 0);
    if (fd >= 0) {
        static const char src[] =
            "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include \"kgate/kernel.h\"\n"
            "extern \"C\" __global__ void k(const __half *a, const __nv_bfloat16 *b, float *c)\n"
            "{ int64_t i = threadIdx.x; KGATE_STORE(&c[i], __half2float(a[i]) + __bfloat162float(b[i])); }\n";
        CHECK(write(fd, src, sizeof src - 1) == (ssize_t)(sizeof src - 1));
        close(fd);
        strcpy(plan.base_dir, "/tmp");
        strcpy(arms[2].source, tmpl + 5);
        kg_err_clear(&err);
        int rc = kg_cuda_compile(&nv, &s, 9, 0, &plan, 2, KG_DT_F16, &image, &bytes, &err);
        CHECK_MSG(rc == KG_OK, "%s", err.msg);
        free(image);
        unlink(tmpl);
    }

    kg_cuda_nvrtc_unload(&nv);
}

/* The architecture check of precompiled images, on hand-made headers:
 * e_flags in the encodings before sm_100 (low byte) and after (byte 1,
 * high byte set), PTX .target, fatbin entries. */
static void put32(unsigned char *b, uint32_t v) { for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i)); }

static void test_image_check(void)
{
    unsigned char elf[64];
    char why[400];
    memset(elf, 0, sizeof elf);
    memcpy(elf, "\177ELF", 4);
    elf[4] = 2; elf[5] = 1; elf[18] = 190;
    put32(elf + 48, 0x5a055au);            /* sm_90, older toolkits */
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 9, 0, why, sizeof why) == 0);
    put32(elf + 48, 0xa005a04u);           /* sm_90, newer toolkits */
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 9, 0, why, sizeof why) == 0);
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 8, 0, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "built for sm_90 and the device is sm_80");
    put32(elf + 48, 0x500550u);            /* sm_80 on an sm_86: runs */
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 8, 6, why, sizeof why) == 0);
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 9, 0, why, sizeof why) == 1);
    put32(elf + 48, 0x6006402u);           /* sm_100 */
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 10, 0, why, sizeof why) == 0);
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 9, 0, why, sizeof why) == 1);
    elf[18] = 62;                          /* an x86-64 object */
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, elf, sizeof elf, 9, 0, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "not a CUDA one");
    CHECK(kg_cuda_image_check(KG_IMAGE_CUBIN, (const unsigned char *)"hello", 5, 9, 0, why, sizeof why) == 1);

    static const char ptx[] = "//\n.version 8.4\n.target sm_80\n.address_size 64\n";
    CHECK(kg_cuda_image_check(KG_IMAGE_PTX, (const unsigned char *)ptx, sizeof ptx - 1, 9, 0, why, sizeof why) == 0);
    CHECK(kg_cuda_image_check(KG_IMAGE_PTX, (const unsigned char *)ptx, sizeof ptx - 1, 7, 5, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, ".target is sm_80");
    CHECK(kg_cuda_image_check(KG_IMAGE_PTX, (const unsigned char *)"no target", 9, 9, 0, why, sizeof why) == 1);

    unsigned char fb[16 + 2 * 64];
    memset(fb, 0, sizeof fb);
    put32(fb, 0xBA55ED50u);
    fb[4] = 1; fb[6] = 16;
    put32(fb + 8, 2 * 64);
    for (int e = 0; e < 2; e++) {
        unsigned char *p = fb + 16 + 64 * e;
        p[0] = e == 0 ? 2 : 1;             /* a cubin for sm_80, PTX for sm_86 */
        put32(p + 4, 64);
        put32(p + 28, e == 0 ? 80 : 86);
    }
    CHECK(kg_cuda_image_check(KG_IMAGE_FATBIN, fb, sizeof fb, 8, 0, why, sizeof why) == 0);
    CHECK(kg_cuda_image_check(KG_IMAGE_FATBIN, fb, sizeof fb, 9, 0, why, sizeof why) == 0);   /* the PTX */
    CHECK(kg_cuda_image_check(KG_IMAGE_FATBIN, fb, sizeof fb, 7, 5, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "cubin sm_80, PTX sm_86");
    fb[0] = 0;
    CHECK(kg_cuda_image_check(KG_IMAGE_FATBIN, fb, sizeof fb, 9, 0, why, sizeof why) == 1);
    CHECK(kg_cuda_image_check(KG_IMAGE_SO, fb, sizeof fb, 9, 0, why, sizeof why) == 1);
}

int main(void)
{
    test_loaders();
    test_args();
    test_geometry();
    test_chain();
    test_gemm_map();
    test_uuid();
    test_compile();
    test_image_check();
    return kg_test_finish("test_cuda_cpu");
}

/* NVRTC and cuBLASLt keep one-time allocations (libstdc++ emergency
 * pools) for the life of the process; they are not kgate's leaks. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnvrtc\nleak:libcublasLt\nleak:libstdc++\n";
}
