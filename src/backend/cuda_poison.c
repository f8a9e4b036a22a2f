/* cuda_poison.c: the poison of checked executions (cuda_api.h,
 * kg_cuda_poison), in the process a CUDA arm runs in: its cuda arm host
 * (cuda_host.c) or, for a trusted arm, the worker (cuda.c).
 *
 * A kernel may read shared memory it never wrote.  Nothing kgate ran
 * before a checked execution used to leave anything there, so such a
 * kernel read zeros in every check and passed them (on the H200 one was
 * admitted and judged FASTER); in a program it runs after other kernels
 * and reads their leftovers.  So before every checked execution kgate's
 * own kernel, kg_smem_poison, writes a word over the whole opt-in shared
 * memory of every SM: a grid of as many blocks as the device has SMs,
 * each asking for the whole opt-in shared memory per block, so that no
 * SM holds two of them; each block marks the SM it ran on (%smid), and
 * the grid is launched again until every SM was reached.  The arm's
 * workspace gets the same word.
 *
 * The kernel is PTX embedded here (CUDA C below, compiled by nvcc
 * -arch=compute_75 -ptx, its .version lowered to 6.4, which every driver
 * kgate supports JIT-compiles for its device), so that no compiler is
 * needed in an arm host:
 *
 *   extern "C" __global__ void kg_smem_poison(unsigned word, unsigned words, unsigned *seen)
 *   {
 *       extern __shared__ unsigned kg_smem[];
 *       volatile unsigned *s = kg_smem;
 *       for (unsigned i = threadIdx.x; i < words; i += blockDim.x) s[i] = word;
 *       if (threadIdx.x == 0) {
 *           unsigned id;
 *           asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
 *           if (id < 1024u) seen[id] = 1u;
 *       }
 *   } */
#include <string.h>
#include "backend/cuda_api.h"

static const char poison_ptx[] =
    ".version 6.4\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "    // .globl    kg_smem_poison\n"
    ".extern .shared .align 16 .b8 kg_smem[];\n"
    ".visible .entry kg_smem_poison(\n"
    "    .param .u32 kg_smem_poison_param_0,\n"
    "    .param .u32 kg_smem_poison_param_1,\n"
    "    .param .u64 kg_smem_poison_param_2\n"
    ")\n"
    "{\n"
    "    .reg .pred     %p<5>;\n"
    "    .reg .b32     %r<14>;\n"
    "    .reg .b64     %rd<5>;\n"
    "    ld.param.u32     %r6, [kg_smem_poison_param_0];\n"
    "    ld.param.u32     %r7, [kg_smem_poison_param_1];\n"
    "    ld.param.u64     %rd1, [kg_smem_poison_param_2];\n"
    "    mov.u32     %r1, %tid.x;\n"
    "    setp.ge.u32     %p1, %r1, %r7;\n"
    "    @%p1 bra     $L__BB0_3;\n"
    "    mov.u32     %r2, %ntid.x;\n"
    "    mov.u32     %r13, %r1;\n"
    "$L__BB0_2:\n"
    "    shl.b32     %r8, %r13, 2;\n"
    "    mov.u32     %r9, kg_smem;\n"
    "    add.s32     %r10, %r9, %r8;\n"
    "    st.volatile.shared.u32     [%r10], %r6;\n"
    "    add.s32     %r13, %r13, %r2;\n"
    "    setp.lt.u32     %p2, %r13, %r7;\n"
    "    @%p2 bra     $L__BB0_2;\n"
    "$L__BB0_3:\n"
    "    setp.ne.s32     %p3, %r1, 0;\n"
    "    @%p3 bra     $L__BB0_6;\n"
    "    mov.u32 %r11, %smid;\n"
    "    setp.gt.u32     %p4, %r11, 1023;\n"
    "    @%p4 bra     $L__BB0_6;\n"
    "    cvta.to.global.u64     %rd2, %rd1;\n"
    "    mul.wide.u32     %rd3, %r11, 4;\n"
    "    add.s64     %rd4, %rd2, %rd3;\n"
    "    mov.u32     %r12, 1;\n"
    "    st.global.u32     [%rd4], %r12;\n"
    "$L__BB0_6:\n"
    "    ret;\n"
    "}\n"
    ;

#define POISON_TRIES 8

uint32_t kg_cuda_poison_word(unsigned n)
{
    return (n & 1u) ? KG_CUDA_POISON_FINITE : KG_CUDA_POISON_NAN;
}

CUresult kg_cuda_poison_init(const kg_cuda_driver *d, CUdevice dev, kg_cuda_poison *p, const char **call)
{
    memset(p, 0, sizeof *p);
    p->min_covered = -1;
    KG_CUDA_TRY("cuDeviceGetAttribute", d->cuDeviceGetAttribute(&p->sm_count, KG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    KG_CUDA_TRY("cuDeviceGetAttribute",
        d->cuDeviceGetAttribute(&p->smem_bytes, KG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
    KG_CUDA_TRY("cuModuleLoadData (kgate's shared-memory poison)", d->cuModuleLoadData(&p->mod, poison_ptx));
    KG_CUDA_TRY("cuModuleGetFunction (kg_smem_poison)", d->cuModuleGetFunction(&p->fn, p->mod, "kg_smem_poison"));
    int threads = 0;
    KG_CUDA_TRY("cuFuncGetAttribute", d->cuFuncGetAttribute(&threads, KG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, p->fn));
    p->threads = threads >= 1024 ? 1024 : threads > 0 ? threads : 1;
    if (p->smem_bytes > 48 * 1024)
        KG_CUDA_TRY("cuFuncSetAttribute (kg_smem_poison)",
            d->cuFuncSetAttribute(p->fn, KG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, p->smem_bytes));
    KG_CUDA_TRY("cuMemAlloc", d->cuMemAlloc(&p->seen, KG_CUDA_POISON_SMIDS * sizeof(uint32_t)));
    return KG_CUDA_SUCCESS;
}

void kg_cuda_poison_free(const kg_cuda_driver *d, kg_cuda_poison *p)
{
    if (p->seen != 0) d->cuMemFree(p->seen);
    if (p->mod != NULL) d->cuModuleUnload(p->mod);
    memset(p, 0, sizeof *p);
    p->min_covered = -1;
}

CUresult kg_cuda_poison_run(const kg_cuda_driver *d, kg_cuda_poison *p, CUstream s, CUdeviceptr ws, size_t ws_bytes,
                            uint32_t *word, int *covered, const char **call)
{
    uint32_t w = kg_cuda_poison_word(p->count++);
    *word = w;
    *covered = 0;
    if (ws != 0 && ws_bytes >= 4) KG_CUDA_TRY("cuMemsetD32Async (the workspace's poison)", d->cuMemsetD32Async(ws, w, ws_bytes / 4, s));
    if (ws != 0 && ws_bytes % 4 != 0)
        KG_CUDA_TRY("cuMemsetD8Async (the workspace's poison)",
            d->cuMemsetD8Async(ws + ws_bytes / 4 * 4, (unsigned char)(w & 0xffu), ws_bytes % 4, s));
    KG_CUDA_TRY("cuMemsetD32Async", d->cuMemsetD32Async(p->seen, 0, KG_CUDA_POISON_SMIDS, s));
    unsigned words = (unsigned)p->smem_bytes / 4u;
    static uint32_t seen[KG_CUDA_POISON_SMIDS];
    for (int t = 0; t < POISON_TRIES && *covered < p->sm_count; t++) {
        void *args[] = { &w, &words, &p->seen };
        KG_CUDA_TRY("cuLaunchKernel (kg_smem_poison)",
            d->cuLaunchKernel(p->fn, (unsigned)p->sm_count, 1, 1, (unsigned)p->threads, 1, 1, (unsigned)p->smem_bytes,
                              s, args, NULL));
        KG_CUDA_TRY("cuStreamSynchronize", d->cuStreamSynchronize(s));
        KG_CUDA_TRY("cuMemcpyDtoH", d->cuMemcpyDtoH(seen, p->seen, sizeof seen));
        *covered = 0;
        for (int i = 0; i < KG_CUDA_POISON_SMIDS; i++) *covered += seen[i] != 0;
    }
    if (p->min_covered < 0 || *covered < p->min_covered) p->min_covered = *covered;
    return KG_CUDA_SUCCESS;
}
