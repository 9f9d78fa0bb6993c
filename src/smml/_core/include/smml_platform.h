/* The one platform rule of smml's compiled core: which builds dispatch to vector copies
 * of their loops at run time, which instruction set a call uses, and the switch that
 * forces a narrower one (issue 32, item 2).
 *
 * SMML_X86_DISPATCH (1 or 0): GCC on x86-64 Linux with glibc. There, libgcc provides the
 * data of __builtin_cpu_supports (Apple's x86-64 toolchain leaves ___cpu_model undefined at
 * link time) and gcc compiles a function for an instruction set named in a target
 * attribute (clang's rules for inlining across targets differ; it gets the portable
 * loops, as MSVC does). Every module that has vector copies tests this macro and nothing
 * else.
 *
 * smml_isa(): the instruction set of this call: SMML_ISA_SCALAR (the portable loops),
 * SMML_ISA_AVX2 (AVX2 and FMA) or SMML_ISA_AVX512 (AVX-512F), the widest the CPU runs,
 * lowered by the environment variable SMML_SIMD ("scalar", "avx2" or "avx512", read once
 * per module, when the module is imported: smml_isa_init). An unknown value leaves the
 * CPU's choice (smml/__init__.py warns about it). The switch exists so that every path is
 * tested on every machine: copies that promise the same bits as the portable loops
 * (_simd_*.h: no fused multiply-add, -ffp-contract=off) are compared with them by
 * tests/test_simd_paths.py.
 *
 * Multi-versioned functions (smml_distances.h, smml_svm.h, smml_gbm.h, smml_tree.h,
 * smml_math.h, smml_neural.h): each header defines them in the #else branch of
 * #ifndef SMML_CLONE_PASS, named SMML_SFX(name) and declared SMML_CLONED, and has
 * smml_clones.h include it once portable (_base) and, where SMML_X86_DISPATCH, once for AVX2
 * (_avx2); name(...) is then SMML_PICK(name, ...), the copy of smml_isa().
 */
#ifndef SMML_PLATFORM_H
#define SMML_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && defined(__GLIBC__)
#define SMML_X86_DISPATCH 1
#include <immintrin.h>
#else
#define SMML_X86_DISPATCH 0
#endif

#if defined(_MSC_VER)
#define SMML_RESTRICT __restrict
#else
#define SMML_RESTRICT restrict
#endif

#if defined(__GNUC__)
#define SMML_MAYBE_UNUSED __attribute__((unused))
#define SMML_ALWAYS_INLINE __attribute__((always_inline)) inline
/* hides an integer variable's value from the optimiser (keeps a short copy loop from being
   turned into library calls) */
#define SMML_OPAQUE(x) __asm__("" : "+r"(x))
#else
#define SMML_MAYBE_UNUSED
#define SMML_ALWAYS_INLINE inline
#define SMML_OPAQUE(x) ((void) 0)
#endif

#define SMML_ISA_SCALAR 0
#define SMML_ISA_AVX2 1
#define SMML_ISA_AVX512 2

/* -1 until smml_isa_init() runs: each module calls it when it is imported (under the GIL,
 * before any kernel runs); smml_isa() calls it too if a module did not, through atomic
 * loads and stores (every thread would store the same value). */
static int smml_isa_level = -1;

/* The widest level the CPU runs, lowered by SMML_SIMD; returns it. */
static SMML_MAYBE_UNUSED int smml_isa_init(void)
{
    int level = SMML_ISA_SCALAR;
    const char *cap = getenv("SMML_SIMD");
#if SMML_X86_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        level = SMML_ISA_AVX2;
    if (level == SMML_ISA_AVX2 && __builtin_cpu_supports("avx512f"))
        level = SMML_ISA_AVX512;
#endif
    if (cap != NULL) {
        if (strcmp(cap, "scalar") == 0)
            level = SMML_ISA_SCALAR;
        else if (strcmp(cap, "avx2") == 0 && level > SMML_ISA_AVX2)
            level = SMML_ISA_AVX2;
    }
#if SMML_X86_DISPATCH
    __atomic_store_n(&smml_isa_level, level, __ATOMIC_RELAXED);
#else
    smml_isa_level = level;
#endif
    return level;
}

static inline SMML_MAYBE_UNUSED int smml_isa(void)
{
#if SMML_X86_DISPATCH
    int level = __atomic_load_n(&smml_isa_level, __ATOMIC_RELAXED);
    return level >= 0 ? level : smml_isa_init();
#else
    return SMML_ISA_SCALAR;
#endif
}

#if SMML_X86_DISPATCH
#define SMML_TARGET_AVX2 __attribute__((target("avx2")))
#define SMML_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define SMML_TARGET_AVX512 __attribute__((target("avx512f")))
#define SMML_PICK(name, ...) \
    (smml_isa() >= SMML_ISA_AVX2 ? name##_avx2(__VA_ARGS__) : name##_base(__VA_ARGS__))
#else
#define SMML_PICK(name, ...) name##_base(__VA_ARGS__)
#endif

/* ---- OpenMP shims that compile with and without OpenMP (smml._core._openmp) ---- */
#ifdef _OPENMP
#include <omp.h>
#define SMML_OPENMP_ENABLED 1
#else
#define SMML_OPENMP_ENABLED 0
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_num_threads(void) { return 1; }
#endif

/* ---- a flag set from several threads, read after the region (smml._core._atomic) ---- */
#ifndef SMML_ATOMIC_FLAG
#define SMML_ATOMIC_FLAG
#if defined(__GNUC__) || defined(__clang__)
static inline void smml_flag_set(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELAXED); }
static inline int smml_flag_get(int *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }
#elif defined(_MSC_VER)
#include <intrin.h>
static __inline void smml_flag_set(int *flag) { _InterlockedExchange((volatile long *)flag, 1); }
static __inline int smml_flag_get(int *flag) { return *(volatile int *)flag; }
#else
static inline void smml_flag_set(int *flag) { *(volatile int *)flag = 1; }
static inline int smml_flag_get(int *flag) { return *(volatile int *)flag; }
#endif
#endif

/* ---- no huge pages under the kernel methods' row cache (smml._core._kernel_methods) ---- */
#if defined(__linux__)
#include <sys/mman.h>
#include <stdint.h>
#include <unistd.h>
#define SMML_LINUX 1
#else
#define SMML_LINUX 0
#endif
/* madvise(MADV_NOHUGEPAGE) on the whole pages inside [p, p + n); 0 on success or where
 * the call does not exist. */
static SMML_MAYBE_UNUSED int smml_no_hugepages(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_NOHUGEPAGE)
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t a, b;
    if (ps <= 0)
        return 0;
    a = ((uintptr_t) p + (uintptr_t) ps - 1) & ~((uintptr_t) ps - 1);
    b = ((uintptr_t) p + n) & ~((uintptr_t) ps - 1);
    if (b <= a)
        return 0;
    return madvise((void *) a, (size_t) (b - a), MADV_NOHUGEPAGE);
#else
    (void) p;
    (void) n;
    return 0;
#endif
}

#endif
