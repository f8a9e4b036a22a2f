/* cuda_blas.c: the `builtin = cublas` arm of the cuda backend: the
 * mapping of a row-major gemm op onto one cuBLASLt matmul
 * (kg_cuda_gemm_map_case, see cuda_api.h), the library's handle and
 * workspace, the matmul described and its algorithm picked at load, and
 * the launch that bind() captures into the timed graph. */
#include <stdio.h>
#include <string.h>
#include "backend/cuda_blas.h"

/* --------------------------------------------------------- cuBLASLt map */

int kg_cuda_gemm_map_case(const char *arm, const kg_case *c, const kg_contract *ct, kg_cuda_gemm_map *m,
                          kg_err *err)
{
    memset(m, 0, sizeof *m);
    /* gemm_splitk has gemm_bt's contract; its workspace is for the
     * kernels' partials, which one cuBLASLt call does not need */
    int bt = strcmp(c->op, "gemm_bt") == 0 || strcmp(c->op, "gemm_splitk") == 0;
    int nt = strcmp(c->op, "gemm_nt") == 0;
    if (!bt && !nt)
        return kg_errorf(err, KG_EUNSUPPORTED, "arm '%s': builtin cublas implements gemm_bt, "
                         "gemm_nt and gemm_splitk, not op '%s' of case '%s'", arm, c->op, c->name);
    if (c->M < 1 || c->N < 1 || c->K < 1)
        return kg_errorf(err, KG_EINPUT, "arm '%s': case '%s' must set M, N and K for builtin "
                         "cublas", arm, c->name);
    switch (c->dtype) {
    case KG_DT_F32: m->in_type = KG_CUDA_R_32F; break;
    case KG_DT_F16: m->in_type = KG_CUDA_R_16F; break;
    case KG_DT_BF16: m->in_type = KG_CUDA_R_16BF; break;
    default:
        return kg_errorf(err, KG_EINPUT, "arm '%s': case '%s' has an unknown dtype", arm, c->name);
    }
    m->out_type = KG_CUDA_R_32F;
    /* CUBLAS_COMPUTE_32F: f32 inputs must be multiplied in full float32
     * for the op's f32 error bound to hold; TF32 only for an arm whose
     * contract is tf32 (its bound admits the conversion) */
    m->compute_type = c->dtype == KG_DT_F32 && ct != NULL && ct->precision == KG_PREC_TF32
                      ? KG_CUBLAS_COMPUTE_32F_FAST_TF32 : KG_CUBLAS_COMPUTE_32F;
    uint64_t M = (uint64_t)c->M, N = (uint64_t)c->N, K = (uint64_t)c->K;
    /* row-major C[M,N] read column-major is C^T[N,M] = op(B) * A^T[K,M] */
    m->m = N;
    m->n = M;
    m->k = K;
    m->a_input = 1;
    if (bt) {
        /* B[N,K] row-major = K x N column-major, ld K: transposed to N x K */
        m->transa = KG_CUBLAS_OP_T;
        m->a_rows = K; m->a_cols = N; m->lda = (int64_t)K;
    } else {
        /* B[K,N] row-major = N x K column-major, ld N: already B^T */
        m->transa = KG_CUBLAS_OP_N;
        m->a_rows = N; m->a_cols = K; m->lda = (int64_t)N;
    }
    m->b_input = 0;                 /* A[M,K] row-major = K x M column-major = A^T */
    m->transb = KG_CUBLAS_OP_N;
    m->b_rows = K; m->b_cols = M; m->ldb = (int64_t)K;
    m->d_rows = N; m->d_cols = M; m->ldd = (int64_t)N;
    return KG_OK;
}

/* ------------------------------------------------------------ cuBLASLt */

/* cuBLASLt is opened, its handle created and its workspace allocated at
 * the first builtin = cublas arm, once per backend: never inside timing. */
int kg_cuda_blas_ready(cuda_ctx *c, kg_err *err)
{
    if (c->lt_handle != NULL) return KG_OK;
    int rc = KG_OK;
    if (c->lt.lib == NULL) {
        rc = kg_cuda_cublaslt_load(&c->lt, c->settings, err);
        if (rc != KG_OK) {
            /* the message must say what to do: the library is optional */
            char old[KG_ERR_MSG_MAX];
            snprintf(old, sizeof old, "%s", err != NULL ? err->msg : "");
            if (err != NULL)
                snprintf(err->msg, sizeof err->msg, "builtin cublas needs cuBLASLt: %.700s (install "
                         "the CUDA toolkit's cuBLAS, set CUDA_HOME or KGATE_LIBCUBLASLT)", old);
            return rc;
        }
    }
    cublasStatus_t st = c->lt.cublasLtCreate(&c->lt_handle);
    if (st != KG_CUBLAS_STATUS_SUCCESS) {
        c->lt_handle = NULL;
        return kg_errorf(err, KG_EBACKEND, "cublasLtCreate failed: status %d", st);
    }
    if (c->lt_ws == 0 && (rc = CU(c, cuMemAlloc, (&c->lt_ws, KG_CUDA_CUBLAS_WS_BYTES), err)) != KG_OK)
        return rc;
    return KG_OK;
}

static int blas_status(cublasStatus_t st, const kg_kernel *k, const char *call, kg_err *err)
{
    if (st == KG_CUBLAS_STATUS_SUCCESS) return KG_OK;
    return kg_errorf(err, KG_EBACKEND, "arm '%s' on case '%s': %s failed: cuBLAS status %d",
                     k->arm, k->kase, call, st);
}

/* Describes the matmul of the case and asks the heuristic for the best
 * algorithm that fits the shared workspace. */
int kg_cuda_blas_load(cuda_ctx *c, const kg_arm *arm, const kg_case *cs, kg_kernel *k, kg_err *err)
{
    cuda_blas *b = &k->blas;
    cublasLtMatmulPreference_t pref = NULL;
    int rc = kg_cuda_gemm_map_case(arm->name, cs, &arm->contract, &b->map, err);
    if (rc != KG_OK) return rc;
    if ((rc = kg_cuda_blas_ready(c, err)) != KG_OK) return rc;
    const kg_cuda_gemm_map *m = &b->map;
    kg_cuda_cublaslt *lt = &c->lt;
    int32_t ta = m->transa, tb = m->transb;
    uint64_t ws_max = KG_CUDA_CUBLAS_WS_BYTES;
    rc = blas_status(lt->cublasLtMatmulDescCreate(&b->desc, m->compute_type, KG_CUBLASLT_SCALE_32F),
                     k, "cublasLtMatmulDescCreate", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulDescSetAttribute(b->desc, KG_CUBLASLT_MATMUL_DESC_TRANSA,
                                                            &ta, sizeof ta),
                         k, "cublasLtMatmulDescSetAttribute(TRANSA)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulDescSetAttribute(b->desc, KG_CUBLASLT_MATMUL_DESC_TRANSB,
                                                            &tb, sizeof tb),
                         k, "cublasLtMatmulDescSetAttribute(TRANSB)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatrixLayoutCreate(&b->la, m->in_type, m->a_rows, m->a_cols,
                                                        m->lda), k, "cublasLtMatrixLayoutCreate(A)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatrixLayoutCreate(&b->lb, m->in_type, m->b_rows, m->b_cols,
                                                        m->ldb), k, "cublasLtMatrixLayoutCreate(B)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatrixLayoutCreate(&b->ld, m->out_type, m->d_rows, m->d_cols,
                                                        m->ldd), k, "cublasLtMatrixLayoutCreate(D)", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulPreferenceCreate(&pref), k,
                         "cublasLtMatmulPreferenceCreate", err);
    if (rc == KG_OK)
        rc = blas_status(lt->cublasLtMatmulPreferenceSetAttribute(
                             pref, KG_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_max, sizeof ws_max),
                         k, "cublasLtMatmulPreferenceSetAttribute", err);
    if (rc != KG_OK) goto done;
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    memset(&res, 0, sizeof res);
    cublasStatus_t st = lt->cublasLtMatmulAlgoGetHeuristic(c->lt_handle, b->desc, b->la, b->lb,
                                                           b->ld, b->ld, pref, 1, &res, &got);
    if (st != KG_CUBLAS_STATUS_SUCCESS || got < 1 || res.state != KG_CUBLAS_STATUS_SUCCESS) {
        rc = kg_errorf(err, KG_EINADMISSIBLE, "arm '%s' on case '%s': cuBLASLt has no algorithm for "
                       "%s gemm_bt %lldx%lldx%lld with float32 output (heuristic status %d, %d "
                       "results)", k->arm, k->kase, kg_dtype_name(cs->dtype), (long long)cs->M,
                       (long long)cs->N, (long long)cs->K, st, got);
        goto done;
    }
    b->algo = res.algo;
    b->ws_bytes = res.workspaceSize;
    /* the algorithm is the "image" of a builtin arm: the same bytes and
     * library version mean the same kernel */
    {
        unsigned char id[sizeof b->algo + sizeof(size_t)];
        size_t ver = lt->cublasLtGetVersion();
        memcpy(id, &b->algo, sizeof b->algo);
        memcpy(id + sizeof b->algo, &ver, sizeof ver);
        kg_cuda_sha256_hex(id, sizeof id, k->image_sha256);
    }
done:
    if (pref != NULL) lt->cublasLtMatmulPreferenceDestroy(pref);
    return rc;
}

void kg_cuda_blas_unload(cuda_ctx *c, kg_kernel *k)
{
    cuda_blas *b = &k->blas;
    if (c->lt.lib == NULL) return;
    if (b->la != NULL) c->lt.cublasLtMatrixLayoutDestroy(b->la);
    if (b->lb != NULL) c->lt.cublasLtMatrixLayoutDestroy(b->lb);
    if (b->ld != NULL) c->lt.cublasLtMatrixLayoutDestroy(b->ld);
    if (b->desc != NULL) c->lt.cublasLtMatmulDescDestroy(b->desc);
    memset(b, 0, sizeof *b);
}

int kg_cuda_blas_launch(cuda_ctx *c, kg_kernel *k, kg_err *err)
{
    static const float one = 1.0f, zero = 0.0f;
    cuda_blas *b = &k->blas;
    /* C = D with beta = 0: C is never read */
    cublasStatus_t st = c->lt.cublasLtMatmul(
        c->lt_handle, b->desc, &one, (const void *)(uintptr_t)b->a, b->la,
        (const void *)(uintptr_t)b->b, b->lb, &zero, (const void *)(uintptr_t)b->d, b->ld,
        (void *)(uintptr_t)b->d, b->ld, &b->algo, (void *)(uintptr_t)c->lt_ws, b->ws_bytes,
        c->stream);
    return blas_status(st, k, "cublasLtMatmul", err);
}
