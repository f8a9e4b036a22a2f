/* splitk_wgmma.cu: split-K C = A * B^T on Hopper's warpgroup tensor cores
 * (wgmma.mma_async m64nBNk16 for f16 or bf16 inputs, m64nBNk8 .tf32 for
 * f32 inputs, float32 accumulate), the operands staged in shared memory in
 * the 128-byte-swizzled K-major layout by cp.async or the TMA through a
 * STAGES-deep ring, and three ways to combine the splits (RED):
 *   RED=0  f32 partials ws[splits][M][N], then the accumulation pass
 *          (entry2 = splitk_accum, kernels/cuda/splitk_accum.cu): the
 *          seeds' two-launch chain;
 *   RED=1  one launch: the splits of one output tile are one thread block
 *          cluster (__cluster_dims__(1, 1, splits)); each block leaves its
 *          f32 tile in its shared memory and block r of the cluster sums
 *          rows r*64/S.. of all S tiles through distributed shared memory,
 *          in split order (deterministic), storing C through KGATE_STORE;
 *          needs `specialize = yes` (the cluster size is the compile-time
 *          KG_VAR_splits) and splits <= 8;
 *   RED=2  two launches: splitk_wg_zero writes C = 0 (through KGATE_STORE),
 *          then every split adds its tile into C with float2 atomics (the
 *          order of the additions is not fixed for splits > 2);
 *   RED=3  one launch: RED=2's atomics without the zeroing launch.  The
 *          splits of a tile are a cluster, as for RED=1; block r of the
 *          cluster writes zeros to rows r*64/S.. of the tile of C first,
 *          then arrives at the cluster barrier (release) and only waits on
 *          it (acquire) after its main loop, before its atomics: every
 *          zero of the tile is in C before any split adds to it, and the
 *          wait costs nothing where the loop is longer than the zeroing.
 *          `specialize = yes` and splits <= 8, as RED=1.
 *
 * Two ways to fill the ring (LOAD):
 *   LOAD=0  cp.async: each thread copies 16-byte chunks to their swizzled
 *           addresses; rows past M are zero-filled (src-size 0) and never
 *           stored; per slice, each thread waits for its own copy group,
 *           then fences them for the tensor cores' async proxy;
 *   LOAD=1  the TMA: A and B arrive as tensor maps (kgate encodes them,
 *           docs/plan-format.md "Tensor maps": A:tmap:BMxKS:sw128 with BM =
 *           64 * MT and KS the slice (64 for 16-bit inputs, 32 for f32),
 *           B:tmap:BNxKS:sw128), and one thread issues two bulk tensor
 *           copies per slice, KS elements (128 bytes) of K by BM or BN rows
 *           each, which the TMA writes in the same 128-byte swizzle
 *           (chunk c of row r at r * 128 + ((c ^ (r % 8)) * 16) from a
 *           1024-aligned stage); each stage has an mbarrier that expects the
 *           two boxes' bytes, and every thread waits on its phase; rows past
 *           M arrive as zeros (the map's out-of-range fill).
 * The maps' boxes must match BM, BN and the slice: a plan whose rows are
 * wrong reads other rows and fails kgate's checks; one whose box is not
 * 128 bytes wide (64 elements of a 16-bit dtype, 32 of f32) delivers fewer
 * bytes than a stage's barrier expects, and the wait traps after about 10 s
 * (KG_WG_WAIT_CYCLES) instead of hanging.
 *
 * Tile: one warpgroup (128 threads) owns 64 * MT rows x BN columns of one
 * split (MT = 2: two m64 wgmma per K step on the same B tile, which halves
 * the B traffic of the 96- and 256-row shapes at the cost of fewer blocks);
 * K is walked in slices of KS = 128 bytes of elements per operand row (64
 * of 16-bit inputs, 32 of f32: the swizzle atom is 8 rows x 128 bytes).
 * Slice kt lives in stage kt % STAGES; per slice: wait for its copies,
 * fence the generic proxy's writes for the tensor cores' async proxy, wait
 * for the previous slice's wgmma, one barrier, issue the copies of slice
 * kt + STAGES - 1 into the stage the previous slice used, then four wgmma
 * steps of 32 bytes of K each (k16 of 16-bit elements, k8 of TF32).
 *
 * f32 inputs (KG_DTYPE 0) run on the tensor cores as TF32: the wgmma reads
 * the raw f32 operands from shared memory and uses 10 of their 23 mantissa
 * bits (whether it rounds or drops the rest is the hardware's), so an f32
 * arm of this kernel declares `precision = tf32`, whose bound admits either
 * conversion (docs/admission.md, "Precision contracts"); under the f32
 * contract it is INCORRECT, as it should be.
 *
 * Two warpgroups a block (WGS=2, 256 threads; MT=1; RED=1: both stay for
 * the cluster's reduction, warpgroup 0 writes the joined tile):
 * warpgroup w takes slices w, w + 2, ... of its split's K range, through a
 * ring of its own (two rings of shared memory; LOAD=1: barriers of its own,
 * its thread 0 issues its copies) and a named barrier of its
 * own (1 + w) in place of the block's, so that each waits for half the
 * slices; at the end warpgroup 1 leaves its accumulators in its ring and
 * warpgroup 0 adds them to its own and writes the tile.  The split rule is
 * unchanged; K % (2 * KS * S) == 0 is needed.
 * TMA multicast (MC = 2 or 4, LOAD=1, RED 0, 2 or 3): MC neighbouring column
 * blocks (the same rows of A) are one cluster along x, (MC, 1, S) with RED=3
 * (rank x + MC z), (MC, 1, 1) otherwise; block cx = blockIdx.x % MC loads
 * rows cx * BM / MC.. of each A slice (map A:tmap:(BM/MC)xKS:sw128) and
 * multicasts them to the MC blocks, which all expect the whole tile on
 * their stage's barrier; so each SM fetches BM / MC + BN rows a slice
 * instead of BM + BN.  MC > 1 takes the producer warp (PW=1, below): a
 * stage is refilled only when every block of the group is done with it
 * (each consumer warp of each block arrives on the stage's empty barrier in
 * all of them: count 4 * MC), which the producer waits for.  The cluster's
 * blocks sync once after their barriers are initialised; RED=3's zeros
 * follow, released then and waited for before the atomics.  N / BN % MC ==
 * 0; MC * S <= 8 with RED=3.
 * The producer warp (PW=1, LOAD=1, RED 0, 2 or 3, no WGN; the block's last
 * 32 threads, block = 128 * WGS + 32): one thread issues every slice of
 * every ring into a stage whose empty barrier has completed, then the warp
 * leaves; the warpgroups only wait for their data (wgmma.wait_group 1, then
 * each warp frees the previous slice's stage) and meet on named barrier 3.
 * With WGN=1 (BN 64 or 128) the two warpgroups split the block's columns
 * instead: one ring, filled by all 256 threads and passed by the block's
 * barrier; warpgroup w multiplies the stage's A by B rows w * BN/2.. (an
 * m64n(BN/2) wgmma) and writes columns n0 + w * BN/2.. of the tile, so A
 * is read once for BN columns where two WGS=2 blocks of BN/2 read it twice.
 *
 * Split s of S = gridDim.z covers k in [s*K/S, (s+1)*K/S): the seeds' split
 * rule when K % S == 0, which the precondition K % (KS * S) == 0 implies.
 * S is the case's splits, or KSPLIT where the arm defines it (RED 1, 2 and
 * 3, which write C and no partials: the grid's third dimension is then
 * KSPLIT, and the case's splits only names the shape; cuBLAS, too, splits
 * K its own way).
 *
 * Defines: BN = 32 | 64 | 128 (columns per block), STAGES = 2..8,
 *   RED = 0 | 1 | 2 | 3, MT = 1 | 2, WGS = 1 | 2 (warpgroups a block) (64 or 128 rows per block), LOAD = 0 | 1,
 *   WGN = 0 | 1 (WGS=2: the warpgroups split K, or the block's columns),
 *   KSPLIT = 1..8 (RED 1, 2, 3: the kernel's own split of K, in place of the case's),
 *   MC = 1 | 2 | 4 (LOAD=1: blocks along x sharing A's tile by multicast),
 *   PW = 0 | 1 (LOAD=1: a producer warp feeds the rings; MC > 1 sets it; block + 32)
 *   (cp.async or the TMA; LOAD=1 entries take the maps in place of A and B:
 *   args = A:tmap:64xKS:sw128, B:tmap:BNxKS:sw128, ... for MT = 1).
 *   KG_DTYPE 0 (f32, as TF32: precision = tf32), 1 (f16) or 2 (bf16).
 * Needs sm_90a: NVRTC arms set `cflags = --gpu-architecture=sm_90a`.
 * Preconditions (a violation traps): N % BN == 0, K % (KS * S) == 0,
 *   gridDim = (N / BN, ceildiv(M, 64 * MT), S), blockDim = (128, 1, 1), the
 *   dynamic shared memory at least STAGES * (64 * MT + BN) * 128 + 1024 bytes
 *   (RED=1: at least the f32 tile, 64 * MT * (BN + 4) * 4, + 1024);
 *   RED=1: S == KG_VAR_splits <= 8 and the launch runs (1, 1, S) clusters
 *   (checked: %cluster_nctarank == S, %cluster_ctarank == blockIdx.z); pointers
 *   16-byte aligned.  Any M >= 1.
 * Shared (dynamic): STAGES * (64 * MT + BN) * 128 + 1024 bytes (the 1024
 *   align the ring to the swizzle atom); RED=1 reuses the ring for the f32
 *   tile.  The forms below are for MT = 1 (MT = 2: ceildiv(M, 128), 64 -> 128).
 *
 * Plan entries (gemm_splitk; NVRTC with cflags = --gpu-architecture=sm_90a):
 *   RED=0: grid = N / BN, ceildiv(M, 64), splits   block = 128
 *          shared = STAGES * (64 + BN) * 128 + 1024   args = A, B, ws, M, N, K
 *          entry2 = splitk_accum  grid2 = ceildiv(M * N, 1024)  block2 = 256
 *          shared2 = 0  args2 = ws, C, M, N, splits
 *   RED=1: specialize = yes; as RED=0 with args = A, B, C, M, N, K, no launch 2
 *   RED=3: as RED=1
 *   WGS=2: block = 256, shared = 2 * STAGES * (64 + BN) * 128 + 1024,
 *          requires K % (2 * KS * splits) == 0
 *   WGN=1: block = 256, shared = STAGES * (64 + BN) * 128 + 1024
 *   LOAD=1: shared + 8 * STAGES per ring (the stages' barriers; MC > 1: 16 * STAGES)
 *   MC>1:  args = A:tmap:(64/MC)xKS:sw128, B:tmap:BNxKS:sw128, C, M, N, K
 *   RED=2: entry = splitk_wg_zero  grid = ceildiv(M * N, 1024)  block = 256
 *          shared = 0  args = C, M, N
 *          entry2 = splitk_wgmma  grid2 = N / BN, ceildiv(M, 64), splits
 *          block2 = 128  shared2 = (as above)  args2 = A, B, C, M, N, K
 * (shared is a plan expression and cannot see the defines: a plan sizes it
 * for the largest STAGES of its axis; the kernel traps on too little.)
 *
 * Kernel contract (docs/plan-format.md): the RED=0, BN=64, STAGES<=4 form.
 * kgate: ops = gemm_splitk
 * kgate: entry = splitk_wgmma
 * kgate: requires = N % 64 == 0, K % (64 * splits) == 0
 * kgate: grid = N / 64, ceildiv(M, 64), splits; block = 128; shared = 4 * 128 * 128 + 1024
 * kgate: args = A, B, ws, M, N, K
 * kgate: entry2 = splitk_accum; grid2 = ceildiv(M * N, 1024); block2 = 256; shared2 = 0
 * kgate: args2 = ws, C, M, N, splits
 */
#include "kgate/kernel.h"

#ifndef BN
#define BN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef RED
#define RED 0
#endif
#ifndef MT
#define MT 1
#endif
#ifndef LOAD
#define LOAD 0
#endif
#ifndef WGS
#define WGS 1
#endif
#if WGS != 1 && WGS != 2
#error "WGS must be 1 or 2 (warpgroups per block)"
#endif
#if WGS == 2 && MT != 1
#error "WGS=2 takes MT=1"
#endif
#ifndef WGN
#define WGN 0
#endif
#if WGN != 0 && (WGN != 1 || WGS != 2 || BN < 64 || LOAD != 0)
#error "WGN=1 (the two warpgroups split the block's columns) takes WGS=2, LOAD=0 and BN 64 or 128"
#endif
/* MC: the blocks of a cluster along x (neighbouring column blocks, the
 * same rows of A) that share A's tile: each loads 64 * MT / MC of its rows
 * by the TMA and multicasts them to all MC */
#ifndef MC
#define MC 1
#endif
#if MC != 1 && MC != 2 && MC != 4
#error "MC must be 1, 2 or 4 (blocks sharing A's tile by TMA multicast)"
#endif
/* PW: a producer warp (the block's last 32 threads) issues the TMA copies
 * and waits for the stages to be free, so no warpgroup waits for a refill */
#ifndef PW
#define PW (MC > 1)
#endif
#if PW != 0 && (PW != 1 || LOAD != 1 || WGN || RED == 1)
#error "PW=1 (a producer warp) takes LOAD=1, RED 0, 2 or 3, and no WGN"
#endif
#if MC > 1 && !PW
#error "MC > 1 takes PW=1 (the producer warp waits for the group's blocks)"
#endif
#if LOAD != 0 && LOAD != 1
#error "LOAD must be 0 (cp.async) or 1 (the TMA, A and B as tensor maps)"
#endif

/* the instruction's K and types, and its tail: scale-d, the immediate
 * scales of A and B, and for 16-bit types the transposes (0: K-major);
 * .tf32 takes no transpose (K-major only) */
#if KG_DTYPE == 0
#define KG_WG_KT "k8.f32.tf32.tf32"
#define KG_WG_TAIL "p, 1, 1;\n"
#elif KG_DTYPE == 1
#define KG_WG_KT "k16.f32.f16.f16"
#define KG_WG_TAIL "p, 1, 1, 0, 0;\n"
#elif KG_DTYPE == 2
#define KG_WG_KT "k16.f32.bf16.bf16"
#define KG_WG_TAIL "p, 1, 1, 0, 0;\n"
#else
#error "splitk_wgmma.cu takes f32 (as TF32), f16 or bf16 inputs (KG_DTYPE 0, 1 or 2)"
#endif
#if BN != 32 && BN != 64 && BN != 128
#error "BN must be 32, 64 or 128"
#endif
#if STAGES < 2 || STAGES > 8
#error "STAGES must be 2..8"
#endif
#if MT != 1 && MT != 2
#error "MT must be 1 (64 rows per block) or 2 (128 rows: two m64 wgmma on one B tile)"
#endif
#if RED < 0 || RED > 3
#error "RED must be 0 (partials + accumulation), 1 (cluster reduction), 2 (atomics) or 3 (cluster-ordered atomics)"
#endif
/* KG_WG_S: the splits a launch of RED 1 or 3 runs as one cluster: KSPLIT
 * where the arm sets it (RED 1, 2, 3 write C, not the case's partials, so
 * the kernel may split K its own way, as cuBLAS does), else the case's */
#if defined(KSPLIT) && RED == 0
#error "KSPLIT: RED=0 writes the case's partials ws[splits, M, N], so its splits are the case's"
#endif
#if RED == 1 || RED == 3
#if defined(KSPLIT)
#define KG_WG_S KSPLIT
#elif defined(KG_VAR_splits)
#define KG_WG_S KG_VAR_splits
#else
#error "RED=1 and RED=3 need the arm's specialize = yes (the cluster size is the case's splits, KG_VAR_splits) or KSPLIT"
#endif
#if KG_WG_S < 1 || KG_WG_S > 8
#error "RED=1 and RED=3: the splits (the case's, or KSPLIT) must be 1..8 (the portable cluster size)"
#endif
#endif
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(__CUDA_ARCH__)
#error "splitk_wgmma.cu needs sm_90a (cflags = --gpu-architecture=sm_90a)"
#endif

#define WG_BM (64 * MT)                       /* rows per block: MT wgmma M of 64 */
#define WG_BK (128 / KG_IN_BYTES)             /* K slice: 128 bytes (64 16-bit or 32 f32 elements) */
#define WG_EPC (16 / KG_IN_BYTES)             /* elements per 16-byte chunk */
#define WG_KSTEPS 4                           /* wgmma steps per slice: 32 bytes of K each */
#define WG_NT 128                             /* one warpgroup */
#define WG_A_BYTES (WG_BM * 128)              /* one stage of A */
#define WG_B_BYTES (BN * 128)                 /* one stage of B */
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
#define WG_WN (WGN ? BN / 2 : BN)             /* columns per warpgroup */
#define WG_LT (WGN ? 2 * WG_NT : WG_NT)       /* threads that fill a ring: its warpgroup's, or the block's */
#define WG_A_CH (WG_BM * 8 / WG_LT)           /* 16-byte chunks per thread per slice: 2, 4 or 8 */
#define WG_B_CH (BN * 8 / WG_LT)              /* 2, 4 or 8 */
#define WG_NRING (WGS == 2 && !WGN ? 2 : 1)   /* rings: one a warpgroup where they split K */
#define WG_RP (BN + 4)                        /* f32 pitch of the RED=1 tile (floats) */
#define WG_RING (STAGES * WG_STAGE_BYTES)
#if RED == 1                                  /* the f32 tile reuses the ring */
#define WG_TILE (WG_BM * WG_RP * 4)
#else
#define WG_TILE 0
#endif
#if LOAD == 1                                 /* the stages' mbarriers, after the rings: */
#define WG_BAR_RING (STAGES * (PW ? 16 : 8))  /* full (and PW: empty) per ring */
#define WG_BARS (WG_NRING * WG_BAR_RING)
#else
#define WG_BARS 0
#endif
#define WG_SMEM_NEED ((WG_NRING * WG_RING > WG_TILE ? WG_NRING * WG_RING : WG_TILE) + WG_BARS + 1024)

__device__ __forceinline__ unsigned kg_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void kg_cp16(unsigned dst, const void *src, unsigned bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void kg_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void kg_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void kg_fence_async_smem()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void kg_wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void kg_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void kg_wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
 * start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29
 * (unused by the swizzled K-major layouts: 1), stride byte offset >> 4 in
 * 32-45 (1024: from one 8-row swizzle atom to the next), base offset 0
 * (atoms 1024-aligned), layout 1 = 128-byte swizzle in bits 62-63. */
__device__ __forceinline__ unsigned long long kg_desc(unsigned saddr)
{
    return (unsigned long long)((saddr & 0x3FFFFu) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}
#if WG_WN == 32
__device__ __forceinline__ void kg_wgmma(float (&d)[16], unsigned long long da, unsigned long long db)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32" KG_WG_KT " "
                 "{"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"
                 "}, %16, %17, " KG_WG_TAIL
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(da), "l"(db), "r"(1)
                 : "memory");
}
#endif
#if WG_WN == 64
__device__ __forceinline__ void kg_wgmma(float (&d)[32], unsigned long long da, unsigned long long db)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64" KG_WG_KT " "
                 "{"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
                 "}, %32, %33, " KG_WG_TAIL
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "r"(1)
                 : "memory");
}
#endif
#if WG_WN == 128
__device__ __forceinline__ void kg_wgmma(float (&d)[64], unsigned long long da, unsigned long long db)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128" KG_WG_KT " "
                 "{"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
                 "}, %64, %65, " KG_WG_TAIL
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(1)
                 : "memory");
}
#endif

/* The accumulators' compiler barrier: their registers are read and
 * written by the asynchronous wgmma between the fence and the wait. */
template <int R> __device__ __forceinline__ void kg_acc_fence(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* One K slice (k0..k0+WG_BK-1) of A rows m0.. and B rows n0..n0+BN-1 into
 * the stage at sa / sb (1024-aligned), 128-byte swizzle: 16-byte chunk c
 * of row r lands at r * 128 + ((c ^ (r % 8)) * 16).  A rows past M are
 * zero-filled (src-size 0; the address stays that of row 0). */
__device__ __forceinline__ void kg_wg_load(unsigned sa, unsigned sb, const kg_in_t *__restrict__ A,
                                           const kg_in_t *__restrict__ B, int M, int K, int m0,
                                           int n0, int k0, int tid)
{
#pragma unroll
    for (int i = 0; i < WG_A_CH; i++) {
        const int idx = tid + i * WG_LT, r = idx >> 3, c = idx & 7;
        const int row = m0 + r;
        const bool ok = row < M;
        const kg_in_t *src = A + (long long)(ok ? row : 0) * K + k0 + c * WG_EPC;
        kg_cp16(sa + r * 128 + ((c ^ (r & 7)) << 4), src, ok ? 16u : 0u);
    }
#pragma unroll
    for (int i = 0; i < WG_B_CH; i++) {
        const int idx = tid + i * WG_LT, r = idx >> 3, c = idx & 7;
        const kg_in_t *src = B + (long long)(n0 + r) * K + k0 + c * WG_EPC;
        kg_cp16(sb + r * 128 + ((c ^ (r & 7)) << 4), src, 16u);
    }
}

#if LOAD == 1
/* a CUtensorMap: 128 opaque bytes */
struct __align__(64) kg_tmap {
    unsigned long long w[16];
};
#define KG_WG_AB_PARAMS const __grid_constant__ kg_tmap mapA, const __grid_constant__ kg_tmap mapB
__device__ __forceinline__ void kg_bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* A stage's wait is microseconds; this many SM cycles (about 10 s) means
 * its bytes never came: a tensor map whose box does not match the block
 * (a 16-bit box on f32 inputs, or the reverse) delivers fewer bytes than
 * the barrier expects.  Trap then, instead of hanging until kgate's
 * timeout. */
#define KG_WG_WAIT_CYCLES 20000000000LL
__device__ __forceinline__ void kg_bar_wait(unsigned bar, unsigned phase)
{
    unsigned done = 0;
    const long long t0 = clock64();
    while (!done) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(phase) : "memory");
        if (!done && clock64() - t0 > KG_WG_WAIT_CYCLES) __trap();
    }
}
#if PW
/* A stage's empty barrier (PW): each warp of every block of the multicast
 * group arrives on it when its part of the stage's wgmma is done (the
 * tensor cores' reads, finished at the wgmma wait before the arrival); the
 * producer waits for all 4 * MC before its next copies into the stage. */
__device__ __forceinline__ void kg_bar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
#endif
#if MC > 1
/* arrive on the barrier at this block's address bar in the cluster's block rank */
__device__ __forceinline__ void kg_bar_arrive_remote(unsigned bar, unsigned rank)
{
    unsigned ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(bar), "r"(rank));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(ra) : "memory");
}
#endif
/* One K slice by the TMA: the stage's barrier expects both boxes' bytes
 * (out-of-range rows count: the TMA writes their zeros), then the two
 * copies complete on it.  One thread.  MC > 1: A's box is this block's
 * share of the tile, rows cx * BM / MC.. (map A:tmap:(BM/MC)xKS), which the
 * TMA writes at the same place in every block of the mask and completes on
 * each one's barrier at the same address; each block's barrier still
 * expects the whole tile of A (its MC shares) and its own B. */
__device__ __forceinline__ void kg_wg_tma(unsigned sa, unsigned sb, unsigned bar, const kg_tmap *mapA,
                                          const kg_tmap *mapB, int m0, int n0, int k0, int cx, unsigned mask)
{
    /* whatever the block did to the stage before (its last reader is the
     * tensor cores, async like the TMA; the fence orders any generic access
     * too, as gemm_bt_tma.cu needs it) */
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"((unsigned)(WG_A_BYTES + WG_B_BYTES)) : "memory");
#if MC > 1
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(sa + (unsigned)(cx * (WG_A_BYTES / MC))),
                 "l"((unsigned long long)mapA), "r"(k0), "r"(m0 + cx * (WG_BM / MC)), "r"(bar),
                 "h"((unsigned short)mask) : "memory");
#else
    (void)cx;
    (void)mask;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(sa), "l"((unsigned long long)mapA), "r"(k0), "r"(m0),
                 "r"(bar) : "memory");
#endif
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(sb), "l"((unsigned long long)mapB), "r"(k0), "r"(n0),
                 "r"(bar) : "memory");
}
#else
#define KG_WG_AB_PARAMS const kg_in_t *__restrict__ A, const kg_in_t *__restrict__ B
#endif

#if RED == 1 || RED == 3
#define KG_WG_CZ KG_WG_S                      /* the splits of a tile are the cluster's z */
#else
#define KG_WG_CZ 1
#endif
#if RED == 1 || RED == 3 || MC > 1
#define KG_WG_CLUSTER __cluster_dims__(MC, 1, KG_WG_CZ)
__device__ __forceinline__ unsigned kg_cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
/* CTAs in this block's cluster: S when the launch honoured __cluster_dims__
 * (.reqnctapercluster), 1 when it ran as a plain grid */
__device__ __forceinline__ unsigned kg_cluster_size()
{
    unsigned n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
    return n;
}
__device__ __forceinline__ void kg_cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void kg_cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void kg_cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ float4 kg_ld_cluster(unsigned saddr, unsigned rank)
{
    unsigned ra;
    float4 v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(saddr), "r"(rank));
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(ra)
                 : "memory");
    return v;
}
#else
#define KG_WG_CLUSTER
#endif

#if MT == 2
#define KG_ACC_FENCE() (kg_acc_fence(acc[0]), kg_acc_fence(acc[1]))
#else
#define KG_ACC_FENCE() kg_acc_fence(acc[0])
#endif

/* One slice's wgmma, committed as one group: four K steps of MT m64
 * wgmma on the stage at sa (A; rows 64u.. are the next 8 swizzle atoms)
 * and its B rows from bw on. */
__device__ __forceinline__ void kg_wg_mma_slice(float (&acc)[MT][WG_WN / 2], unsigned sa, unsigned bw)
{
    const unsigned sb = sa + WG_A_BYTES;
    kg_wg_fence();
    KG_ACC_FENCE();
#pragma unroll
    for (int kk = 0; kk < WG_KSTEPS; kk++)
#pragma unroll
        for (int u = 0; u < MT; u++)
            kg_wgmma(acc[u], kg_desc(sa + u * 8192 + kk * 32), kg_desc(sb + bw + kk * 32));
    kg_wg_commit();
    KG_ACC_FENCE();
}

/* the barrier of one warpgroup's ring: the block's where there is one
 * warpgroup or both share it (WGN), named barrier 1 + g (128 threads)
 * where each has its own */
#if WGS == 1 || WGN
#define KG_WG_SYNC() __syncthreads()
#else
#define KG_WG_SYNC() asm volatile("bar.sync %0, %1;\n" ::"r"(1 + wgi), "n"(WG_NT) : "memory")
#endif

/* four zeros of C at p (16-byte aligned), through KGATE_STORE like every write of C */
__device__ __forceinline__ void kg_store_zero4(float *p)
{
    float4 v;
    KGATE_STORE(&v.x, 0.0f);
    KGATE_STORE(&v.y, 0.0f);
    KGATE_STORE(&v.z, 0.0f);
    KGATE_STORE(&v.w, 0.0f);
    *(float4 *)p = v;
}

#if RED == 3
/* RED=3: split s's share of the zeros of C's tile at (m0, n0), rows
 * s * BM / S.., through KGATE_STORE like every write of C */
__device__ __forceinline__ void kg_wg_zero(float *__restrict__ out, int M, int N, int m0, int n0, int s, int S)
{
    const int zb = s * WG_BM / S, ze = (s + 1) * WG_BM / S, nz = (ze - zb) * (BN / 4);
    for (int c = (int)threadIdx.x; c < nz; c += (int)blockDim.x) {
        const int row = m0 + zb + c / (BN / 4), cc = (c % (BN / 4)) * 4;
        if (row >= M) continue;
        kg_store_zero4(out + (long long)row * N + n0 + cc);
    }
}
#endif

/* the block's consumer threads meet (the producer warp, PW, has left) */
#if PW
#define KG_BLOCK_SYNC() asm volatile("bar.sync 3, %0;\n" ::"n"(WG_NT * WGS) : "memory")
#else
#define KG_BLOCK_SYNC() __syncthreads()
#endif

extern "C" __global__ void KG_WG_CLUSTER __launch_bounds__(WG_NT * WGS + 32 * PW, 1)
splitk_wgmma(KG_WG_AB_PARAMS, float *__restrict__ out, int M, int N, int K)
{
    extern __shared__ __align__(1024) unsigned char kg_wg_smem[];
    unsigned dsmem;
    asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dsmem));
    const int S = (int)gridDim.z;
    if (blockDim.x != WG_NT * WGS + 32 * PW || blockDim.y != 1 || blockDim.z != 1 || M < 1 || N % BN != 0 ||
        (int)gridDim.x * BN != N || (int)gridDim.y != (M + WG_BM - 1) / WG_BM ||
        K % (WG_BK * S) != 0 || dsmem < (unsigned)WG_SMEM_NEED)
        __trap();
#if RED == 1 || RED == 3 || MC > 1
    /* the reduction reads ranks 0..S-1 of this cluster, rank q being split q
     * (RED=3: the ranks zero the tile for each other; MC > 1: x + MC z), and
     * the multicast writes to the ranks of this block's row of the cluster:
     * a launch that is not an (MC, 1, S) cluster launch (S: 1 for RED 0
     * and 2) traps here instead of reading or writing another CTA's shared
     * memory, or adding to a tile no one zeroed */
#if RED == 1 || RED == 3
    if (S != KG_WG_S) __trap();
#endif
    if ((int)gridDim.x % MC != 0 || kg_cluster_size() != (unsigned)(MC * KG_WG_CZ) ||
        kg_cluster_rank() != blockIdx.x % MC + MC * (KG_WG_CZ > 1 ? blockIdx.z : 0u))
        __trap();
#endif
#if MC > 1
    /* this block's share of A (cx) and the ranks of its multicast group */
    const int cx = (int)(blockIdx.x % MC);
    const unsigned grp = kg_cluster_rank() - (unsigned)cx, mask = ((1u << MC) - 1u) << grp;
#else
    const int cx = 0;
    const unsigned mask = 0u;
#endif
    /* warpgroup wgi of the block (WGS = 2: each takes every other slice of
     * the split's K range, in a ring of its own) and its thread tid */
    const int wgi = WGS == 2 && (!PW || (int)threadIdx.x < WG_NT * WGS) ? (int)threadIdx.x / WG_NT : 0, tid = (int)threadIdx.x % WG_NT, s = (int)blockIdx.z;
    const unsigned ring0 = (kg_smem_addr(kg_wg_smem) + 1023u) & ~1023u;
    const int m0 = (int)blockIdx.y * WG_BM, n0 = (int)blockIdx.x * BN;
#if WGN
    /* one ring, filled by the block's 256 threads; warpgroup wgi multiplies
     * A by rows wgi * WG_WN.. of the stage's B, columns n0 + wgi * WG_WN.. */
    const unsigned base = ring0;
    const int lt = (int)threadIdx.x, ks = K / S, kb = s * ks, nk = ks / WG_BK;
    const unsigned bw = (unsigned)(wgi * WG_WN * 128);
    const int nw0 = n0 + wgi * WG_WN;
#define WG_KJ WG_BK
#else
    const unsigned base = ring0 + (unsigned)(wgi * WG_RING);
    const int lt = tid, ks = K / S, kb = s * ks + wgi * WG_BK, nk = ks / WG_BK / WGS;
    const unsigned bw = 0u;
    const int nw0 = n0;
    if ((ks / WG_BK) % WGS != 0) __trap();
    /* slice j of this warpgroup: k from kb + j * WG_KJ */
#define WG_KJ (WG_BK * WGS)
#endif
    (void)lt;
#if RED == 3 && !PW
    kg_wg_zero(out, M, N, m0, n0, s, S);
    kg_cluster_arrive();   /* released: the zeros are before this split's mark */
#endif

    float acc[MT][WG_WN / 2];
#pragma unroll
    for (int u = 0; u < MT; u++)
#pragma unroll
        for (int i = 0; i < WG_WN / 2; i++) acc[u][i] = 0.0f;

#if LOAD == 1
    /* this ring's barriers, after the rings: stage st's full barrier (its
     * copies landed) at bars + 8 st, its empty one (MC > 1: every block of
     * the group is done with it) at bars + 8 (STAGES + st) */
    const unsigned bars = ring0 + (unsigned)(WG_NRING * WG_RING > WG_TILE ? WG_NRING * WG_RING : WG_TILE) +
                          (unsigned)(wgi * WG_BAR_RING);
    if (tid == 0 && (int)threadIdx.x < WG_NT * WGS) {
        for (int st = 0; st < STAGES; st++) {
            kg_bar_init(bars + 8 * st, 1u);
            if (PW) kg_bar_init(bars + 8 * (STAGES + st), 4u * MC);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
#if PW && MC > 1
    /* every block's barriers are initialised before the first multicast
     * completes on them (no store is pending: the release is cheap) */
    kg_cluster_arrive();
    kg_cluster_wait();
#endif
#if PW && RED == 3
    /* the zeros, released here and waited for before the atomics: the
     * wait costs nothing where the main loop is longer than the stores */
    kg_wg_zero(out, M, N, m0, n0, s, S);
    kg_cluster_arrive();
#endif
#if PW
    /* the producer warp: one thread issues every slice of every ring (ring
     * w: the warpgroup w's slices w, w + WGS, ... of the split), each into a
     * stage the whole group is done with (its empty barrier's phase), then
     * the warp leaves (having arrived at the cluster barrier, if any; the
     * block stays while its warpgroups wait for their data) */
    if ((int)threadIdx.x >= WG_NT * WGS) {
        if ((int)threadIdx.x == WG_NT * WGS)
            for (int nt = 0; nt < nk; nt++)
                for (int w = 0; w < WGS; w++) {
                    const int st = nt % STAGES;
                    const unsigned rb = ring0 + (unsigned)(w * WG_RING) + (unsigned)(st * WG_STAGE_BYTES);
                    const unsigned bb = ring0 + (unsigned)(WG_NRING * WG_RING) + (unsigned)(w * WG_BAR_RING);
                    if (nt >= STAGES) kg_bar_wait(bb + 8 * (STAGES + st), (unsigned)(nt / STAGES - 1) & 1u);
                    kg_wg_tma(rb, rb + WG_A_BYTES, bb + 8 * st, &mapA, &mapB, m0, n0,
                              s * ks + w * WG_BK + nt * WG_KJ, cx, mask);
                }
        return;
    }
#endif
    if (tid == 0 && !PW)
        for (int st = 0; st < STAGES - 1 && st < nk; st++)
            kg_wg_tma(base + st * WG_STAGE_BYTES, base + st * WG_STAGE_BYTES + WG_A_BYTES, bars + 8 * st, &mapA,
                      &mapB, m0, n0, kb + st * WG_KJ, cx, mask);
#else
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < nk)
            kg_wg_load(base + st * WG_STAGE_BYTES, base + st * WG_STAGE_BYTES + WG_A_BYTES, A, B, M, K,
                       m0, n0, kb + st * WG_KJ, lt);
        kg_cp_commit();
    }
#endif
#if PW
    /* the warpgroup: wait for slice kt, issue its wgmma, and once slice
     * kt - 1's are done (one group left in flight) free its stage in every
     * block of the group: lane q < MC of each warp arrives at rank grp + q.
     * Only where the stage is refilled (kt - 1 + STAGES < nk): no arrival
     * reaches a block that has left. */
    for (int kt = 0; kt < nk; kt++) {
        kg_bar_wait(bars + 8 * (kt % STAGES), (unsigned)(kt / STAGES) & 1u);
        kg_wg_mma_slice(acc, base + (kt % STAGES) * WG_STAGE_BYTES, bw);
        kg_wg_wait<1>();
        KG_ACC_FENCE();
        const int lane_q = tid & 31;
        if (kt >= 1 && kt - 1 + STAGES < nk && lane_q < MC) {
            const unsigned eb = bars + 8 * (STAGES + (kt - 1) % STAGES);
#if MC > 1
            kg_bar_arrive_remote(eb, grp + (unsigned)lane_q);
#else
            kg_bar_arrive(eb);
#endif
        }
    }
#else
    for (int kt = 0; kt < nk; kt++) {
#if LOAD == 1
        /* slice kt's boxes landed: phase kt / STAGES of its stage's barrier */
        kg_bar_wait(bars + 8 * (kt % STAGES), (unsigned)(kt / STAGES) & 1u);
#else
        kg_cp_wait<STAGES - 2>();   /* this thread's copies of slice kt landed */
        kg_fence_async_smem();      /* ... and are visible to the tensor cores */
#endif
        kg_wg_wait<0>();            /* slice kt - 1's wgmma is done with its stage */
        KG_ACC_FENCE();
        KG_WG_SYNC();               /* every thread's copies of slice kt; stage of kt - 1 free */
        const int nt = kt + STAGES - 1;
#if LOAD == 1
        if (nt < nk && tid == 0) {
            const unsigned sa = base + (nt % STAGES) * WG_STAGE_BYTES;
            kg_wg_tma(sa, sa + WG_A_BYTES, bars + 8 * (nt % STAGES), &mapA, &mapB, m0, n0, kb + nt * WG_KJ, cx, mask);
        }
#else
        if (nt < nk) {
            const unsigned sa = base + (nt % STAGES) * WG_STAGE_BYTES;
            kg_wg_load(sa, sa + WG_A_BYTES, A, B, M, K, m0, n0, kb + nt * WG_KJ, lt);
        }
        kg_cp_commit();
#endif
        kg_wg_mma_slice(acc, base + (kt % STAGES) * WG_STAGE_BYTES, bw);
    }
#endif
    kg_wg_wait<0>();
    KG_ACC_FENCE();
#if LOAD == 0
    kg_cp_wait<0>();
#endif
#if WGS == 2 && !WGN
    /* warpgroup 1's accumulators join warpgroup 0's through warpgroup 1's
     * ring, whose copies and tensor-core reads are all done once every
     * thread is past its waits; then warpgroup 1 is finished (RED=3: after
     * the cluster barrier, which every thread of the block takes) */
    {
        float *x = (float *)(kg_wg_smem + (ring0 + WG_RING - kg_smem_addr(kg_wg_smem)));
        KG_BLOCK_SYNC();
        if (wgi == 1)
#pragma unroll
            for (int i = 0; i < BN / 2; i++) x[i * WG_NT + tid] = acc[0][i];
        KG_BLOCK_SYNC();
        if (wgi == 1) {
#if RED == 3
            kg_cluster_wait();
#endif
#if RED != 1
            return;   /* RED=1: it stays for the cluster's reduction */
#endif
        } else {
#pragma unroll
            for (int i = 0; i < BN / 2; i++) acc[0][i] += x[i * WG_NT + tid];
        }
    }
#endif

    /* accumulator fragment (PTX ISA, wgmma .m64nNk16 D, the same for k8): warp w, lane
     * g * 4 + t holds rows 16w + g (acc[4j], acc[4j+1]) and 16w + g + 8
     * (acc[4j+2], acc[4j+3]), columns 8j + 2t, 8j + 2t + 1 */
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int r0 = 16 * warp + g;
#if RED == 0
    float *o = out + (long long)s * M * N;
#pragma unroll
    for (int u = 0; u < MT; u++)
#pragma unroll
    for (int j = 0; j < WG_WN / 8; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = m0 + 64 * u + r0 + 8 * h;
            if (row < M)
                *(float2 *)(o + (long long)row * N + nw0 + 8 * j + 2 * t) =
                    make_float2(acc[u][4 * j + 2 * h], acc[u][4 * j + 2 * h + 1]);
        }
#elif RED == 2 || RED == 3
#if RED == 3
    kg_cluster_wait();   /* every split of the cluster wrote its zeros */
#endif
#pragma unroll
    for (int u = 0; u < MT; u++)
#pragma unroll
    for (int j = 0; j < WG_WN / 8; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = m0 + 64 * u + r0 + 8 * h;
            if (row < M) {
                float2 v;
                KGATE_STORE(&v.x, acc[u][4 * j + 2 * h]);
                KGATE_STORE(&v.y, acc[u][4 * j + 2 * h + 1]);
                atomicAdd((float2 *)(out + (long long)row * N + nw0 + 8 * j + 2 * t), v);
            }
        }
#else
    /* every warp's wgmma reads of the ring are done (wait above); the
     * barrier before the tile overwrites it.  The tile is in ring 0; with
     * WGS=2 warpgroup 0 holds the block's sums (warpgroup 1's joined them in
     * ring 1) and writes it, and both warpgroups reduce. */
    __syncthreads();
    float *tile = (float *)(kg_wg_smem + (ring0 - kg_smem_addr(kg_wg_smem)));
    if (wgi == 0)
#pragma unroll
    for (int u = 0; u < MT; u++)
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            *(float2 *)(tile + (64 * u + r0 + 8 * h) * WG_RP + 8 * j + 2 * t) =
                make_float2(acc[u][4 * j + 2 * h], acc[u][4 * j + 2 * h + 1]);
    kg_cluster_sync();   /* every split's tile is written and visible in the cluster */
    const int rank = (int)kg_cluster_rank();
    const int rb = rank * WG_BM / S, re = (rank + 1) * WG_BM / S;
    const int nch = (re - rb) * (BN / 4);
    for (int c = (int)threadIdx.x; c < nch; c += (int)blockDim.x) {
        const int rr = rb + c / (BN / 4), cc = (c % (BN / 4)) * 4;
        const int row = m0 + rr;
        if (row >= M) continue;
        const unsigned off = ring0 + (unsigned)(rr * WG_RP + cc) * 4u;
        float4 a = kg_ld_cluster(off, 0);
        for (int q = 1; q < S; q++) {
            const float4 p = kg_ld_cluster(off, (unsigned)q);
            a.x += p.x; a.y += p.y; a.z += p.z; a.w += p.w;
        }
        float4 v;
        KGATE_STORE(&v.x, a.x);
        KGATE_STORE(&v.y, a.y);
        KGATE_STORE(&v.z, a.z);
        KGATE_STORE(&v.w, a.w);
        *(float4 *)(out + (long long)row * N + n0 + cc) = v;
    }
    kg_cluster_sync();   /* no block leaves while another reads its tile */
#endif
}

/* RED=2's first launch: C = 0, four floats per thread (M * N % 4 == 0,
 * which N % BN == 0 gives), through KGATE_STORE like every write of C. */
extern "C" __global__ void splitk_wg_zero(float *__restrict__ C, int M, int N)
{
    const long long total = (long long)M * N;
    if (total % 4 != 0) __trap();
    const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i >= total) return;
    kg_store_zero4(C + i);
}

/* the accumulation pass (entry2 of RED=0 arms) */
#include "splitk_accum.cu"
