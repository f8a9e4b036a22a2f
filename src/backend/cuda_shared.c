/* cuda_shared.c: the helpers of cuda_shared.h, which every file of the
 * cuda backend may use. */
#include <stdio.h>
#include <openssl/evp.h>
#include "backend/cuda_shared.h"

int kg_cuda_check(cuda_ctx *c, CUresult rc, const char *call, const char *file, int line,
                  kg_err *err)
{
    if (rc == KG_CUDA_SUCCESS) return KG_OK;
    c->last_rc = rc;
    char text[256];
    kg_cuda_result_text(&c->drv, rc, text, sizeof text);
    return kg_errorf(err, KG_EBACKEND, "%s failed at %s:%d: %s", call, file, line, text);
}

void kg_cuda_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    out[0] = '\0';
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}
