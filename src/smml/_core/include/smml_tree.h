/* The exact tree splitter's partition and scan (smml._core._tree).
 *
 * The functions marked SMML_CLONED are compiled twice, portable and for AVX2, with the
 * same operations in the same order (the modules are compiled with -ffp-contract=off:
 * no fused multiply-add): both copies give the same bits, which tests/test_simd_paths.py
 * checks by forcing each one (SMML_SIMD, smml_platform.h). */
#ifndef SMML_CLONE_PASS
#ifndef SMML_SIMD_TREE_H
#define SMML_SIMD_TREE_H

#include <math.h>
#include <string.h>
#include "smml_platform.h"
#include "smml_math.h"     /* smml_bits, smml_select, ... */

/* smml_partition_pairs: the exact tree splitter's partition of one feature's sorted segment
 * (smml._core._tree._partition_sorted). n pairs (si[p], rs[p]); the pairs whose sample
 * si[p] has gl[si[p]] != 0 move to the front, in order, the others after them, in order
 * (through the scratch ti, tr). Returns the number in front. The copy back is a loop for
 * short segments (most are a few pairs long; the loop is kept from becoming memmove calls),
 * memcpy from SMML_PARTITION_MEMCPY pairs on. gl must be readable 3 bytes
 * past its last sample (a gather reads 4 bytes), and ti, tr must have room for n + 15
 * values (whole vectors are stored). Each pair is written to both sides' next slots and
 * only its side advances: no branch per pair (which side is unpredictable); the writes to
 * si, rs never pass the reads. level: the widest path allowed (SMML_ISA_*), lowered to
 * smml_isa(). With AVX-512, 16 pairs at a time: the samples' flags gathered, each side's
 * pairs compressed into the front of a vector and stored whole; with AVX2, 8 at a time,
 * compressed by a permutation (smml_partition_pairs_avx2). The same result on every path.
 *
 * smml_partition_rest: pairs p..n-1 one at a time, from the sides' next slots *qp, *rp. */
static inline void smml_partition_rest(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                       int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t p,
                                       ptrdiff_t n, ptrdiff_t *qp, ptrdiff_t *rp)
{
    ptrdiff_t q = *qp, r = *rp;
    for (; p < n; p++) {
        int32_t i = si[p], v = rs[p];
        ptrdiff_t g = gl[i] != 0;
        si[q] = i;
        rs[q] = v;
        ti[r] = i;
        tr[r] = v;
        q += g;
        r += 1 - g;
    }
    *qp = q;
    *rp = r;
}

#if SMML_X86_DISPATCH
SMML_TARGET_AVX512 SMML_MAYBE_UNUSED
static ptrdiff_t smml_partition_pairs_avx512(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                             int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t n)
{
    ptrdiff_t p = 0, q = 0, r = 0;
    const __m512i low = _mm512_set1_epi32(0xFF);
    if (n >= 16) {
        /* the next block's loads and gather go out before this block's stores (whose
           addresses wait on the flags): the gathers' latencies overlap */
        __m512i vi = _mm512_loadu_si512((const void *) si);
        __m512i vr = _mm512_loadu_si512((const void *) rs);
        __m512i g = _mm512_i32gather_epi32(vi, (const void *) gl, 1);
        for (p = 16;; p += 16) {
            __m512i vi2 = vi, vr2 = vr, g2 = g;
            int more = p + 16 <= n;
            if (more) {
                vi2 = _mm512_loadu_si512((const void *) (si + p));
                vr2 = _mm512_loadu_si512((const void *) (rs + p));
                g2 = _mm512_i32gather_epi32(vi2, (const void *) gl, 1);
            }
            __mmask16 m = _mm512_test_epi32_mask(g, low);
            int c = __builtin_popcount((unsigned) m);
            _mm512_storeu_si512((void *) (si + q), _mm512_maskz_compress_epi32(m, vi));
            _mm512_storeu_si512((void *) (rs + q), _mm512_maskz_compress_epi32(m, vr));
            _mm512_storeu_si512((void *) (ti + r), _mm512_maskz_compress_epi32((__mmask16) ~m, vi));
            _mm512_storeu_si512((void *) (tr + r), _mm512_maskz_compress_epi32((__mmask16) ~m, vr));
            q += c;
            r += 16 - c;
            if (!more)
                break;
            vi = vi2;
            vr = vr2;
            g = g2;
        }
    }
    smml_partition_rest(si, rs, ti, tr, gl, p, n, &q, &r);
    for (p = 0; p < r; p += 16) {          /* masked at the end: nothing past the segment */
        __mmask16 k = (r - p >= 16) ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (r - p)) - 1);
        _mm512_mask_storeu_epi32((void *) (si + q + p), k, _mm512_maskz_loadu_epi32(k, ti + p));
        _mm512_mask_storeu_epi32((void *) (rs + q + p), k, _mm512_maskz_loadu_epi32(k, tr + p));
    }
    return q;
}

/* smml_partition_lanes[m]: the lanes k of 8 whose bit k is set in m, in order, one byte each
 * from the lowest (the rest 0): the permutation that compresses those lanes of a vector into
 * its front (vpermd), as AVX-512's compress does */
static const uint64_t smml_partition_lanes[256] = {
    0x0, 0x0, 0x1, 0x100, 0x2, 0x200, 0x201, 0x20100,
    0x3, 0x300, 0x301, 0x30100, 0x302, 0x30200, 0x30201, 0x3020100,
    0x4, 0x400, 0x401, 0x40100, 0x402, 0x40200, 0x40201, 0x4020100,
    0x403, 0x40300, 0x40301, 0x4030100, 0x40302, 0x4030200, 0x4030201, 0x403020100,
    0x5, 0x500, 0x501, 0x50100, 0x502, 0x50200, 0x50201, 0x5020100,
    0x503, 0x50300, 0x50301, 0x5030100, 0x50302, 0x5030200, 0x5030201, 0x503020100,
    0x504, 0x50400, 0x50401, 0x5040100, 0x50402, 0x5040200, 0x5040201, 0x504020100,
    0x50403, 0x5040300, 0x5040301, 0x504030100, 0x5040302, 0x504030200, 0x504030201, 0x50403020100,
    0x6, 0x600, 0x601, 0x60100, 0x602, 0x60200, 0x60201, 0x6020100,
    0x603, 0x60300, 0x60301, 0x6030100, 0x60302, 0x6030200, 0x6030201, 0x603020100,
    0x604, 0x60400, 0x60401, 0x6040100, 0x60402, 0x6040200, 0x6040201, 0x604020100,
    0x60403, 0x6040300, 0x6040301, 0x604030100, 0x6040302, 0x604030200, 0x604030201, 0x60403020100,
    0x605, 0x60500, 0x60501, 0x6050100, 0x60502, 0x6050200, 0x6050201, 0x605020100,
    0x60503, 0x6050300, 0x6050301, 0x605030100, 0x6050302, 0x605030200, 0x605030201, 0x60503020100,
    0x60504, 0x6050400, 0x6050401, 0x605040100, 0x6050402, 0x605040200, 0x605040201, 0x60504020100,
    0x6050403, 0x605040300, 0x605040301, 0x60504030100, 0x605040302, 0x60504030200, 0x60504030201, 0x6050403020100,
    0x7, 0x700, 0x701, 0x70100, 0x702, 0x70200, 0x70201, 0x7020100,
    0x703, 0x70300, 0x70301, 0x7030100, 0x70302, 0x7030200, 0x7030201, 0x703020100,
    0x704, 0x70400, 0x70401, 0x7040100, 0x70402, 0x7040200, 0x7040201, 0x704020100,
    0x70403, 0x7040300, 0x7040301, 0x704030100, 0x7040302, 0x704030200, 0x704030201, 0x70403020100,
    0x705, 0x70500, 0x70501, 0x7050100, 0x70502, 0x7050200, 0x7050201, 0x705020100,
    0x70503, 0x7050300, 0x7050301, 0x705030100, 0x7050302, 0x705030200, 0x705030201, 0x70503020100,
    0x70504, 0x7050400, 0x7050401, 0x705040100, 0x7050402, 0x705040200, 0x705040201, 0x70504020100,
    0x7050403, 0x705040300, 0x705040301, 0x70504030100, 0x705040302, 0x70504030200, 0x70504030201, 0x7050403020100,
    0x706, 0x70600, 0x70601, 0x7060100, 0x70602, 0x7060200, 0x7060201, 0x706020100,
    0x70603, 0x7060300, 0x7060301, 0x706030100, 0x7060302, 0x706030200, 0x706030201, 0x70603020100,
    0x70604, 0x7060400, 0x7060401, 0x706040100, 0x7060402, 0x706040200, 0x706040201, 0x70604020100,
    0x7060403, 0x706040300, 0x706040301, 0x70604030100, 0x706040302, 0x70604030200, 0x70604030201, 0x7060403020100,
    0x70605, 0x7060500, 0x7060501, 0x706050100, 0x7060502, 0x706050200, 0x706050201, 0x70605020100,
    0x7060503, 0x706050300, 0x706050301, 0x70605030100, 0x706050302, 0x70605030200, 0x70605030201, 0x7060503020100,
    0x7060504, 0x706050400, 0x706050401, 0x70605040100, 0x706050402, 0x70605040200, 0x70605040201, 0x7060504020100,
    0x706050403, 0x70605040300, 0x70605040301, 0x7060504030100, 0x70605040302, 0x7060504030200, 0x7060504030201, 0x706050403020100,
};

/* the lanes of 8 pairs whose bits are set in m, compressed into the front of a vector */
SMML_TARGET_AVX2 static inline __m256i smml_partition_perm(unsigned m)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (smml_partition_lanes + m)));
}

/* AVX2 (no compress instruction): 8 pairs at a time, each side's pairs moved to the front of
 * a vector by a permutation from smml_partition_lanes and stored whole. The flags are read
 * as bytes, one load per pair, into a mask of 8 bits: on the AMD EPYC (Zen 3) of issue 30 an
 * 8-lane gather was slower (bench/forest.md). The second side is copied back in whole
 * vectors, the last one ending at the segment's end, and in a loop below 8 pairs: a masked
 * store (vpmaskmovd) cost more than the rest of a short segment's partition there. */
SMML_TARGET_AVX2 SMML_MAYBE_UNUSED
static ptrdiff_t smml_partition_pairs_avx2(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                           int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t n)
{
    ptrdiff_t p = 0, q = 0, r = 0;
    for (; p + 8 <= n; p += 8) {
        __m256i vi = _mm256_loadu_si256((const __m256i *) (si + p));
        __m256i vr = _mm256_loadu_si256((const __m256i *) (rs + p));
        unsigned m = 0;
        int k;
        for (k = 0; k < 8; k++)
            m |= (unsigned) (gl[si[p + k]] != 0) << k;
        __m256i pl = smml_partition_perm(m), pr = smml_partition_perm(m ^ 0xFFu);
        /* the writes to si, rs end by p + 8 (q <= p): this block's pairs are already read */
        _mm256_storeu_si256((__m256i *) (si + q), _mm256_permutevar8x32_epi32(vi, pl));
        _mm256_storeu_si256((__m256i *) (rs + q), _mm256_permutevar8x32_epi32(vr, pl));
        _mm256_storeu_si256((__m256i *) (ti + r), _mm256_permutevar8x32_epi32(vi, pr));
        _mm256_storeu_si256((__m256i *) (tr + r), _mm256_permutevar8x32_epi32(vr, pr));
        q += __builtin_popcount(m);
        r = p + 8 - q;
    }
    smml_partition_rest(si, rs, ti, tr, gl, p, n, &q, &r);
    if (r >= 8) {
        /* whole vectors, the last one ending at the segment's end (it may write a few
           values twice, the same): nothing past the segment */
        for (p = 0;; p += 8) {
            if (p > r - 8)
                p = r - 8;
            _mm256_storeu_si256((__m256i *) (si + q + p), _mm256_loadu_si256((const __m256i *) (ti + p)));
            _mm256_storeu_si256((__m256i *) (rs + q + p), _mm256_loadu_si256((const __m256i *) (tr + p)));
            if (p == r - 8)
                break;
        }
    } else {
        for (p = 0; p < r; p++) {
            SMML_OPAQUE(p);                /* no memmove calls (smml_partition_pairs) */
            si[q + p] = ti[p];
            rs[q + p] = tr[p];
        }
    }
    return q;
}
#endif

/* the portable path's copy back of the second side: memcpy from this many pairs on, a loop
 * below (most segments are a few pairs long) */
#define SMML_PARTITION_MEMCPY 64

static inline ptrdiff_t smml_partition_pairs(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                             int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t n,
                                             int level)
{
    ptrdiff_t p, q = 0, r = 0;
#if SMML_X86_DISPATCH
    int isa = smml_isa() < level ? smml_isa() : level;
    if (isa >= SMML_ISA_AVX512)
        return smml_partition_pairs_avx512(si, rs, ti, tr, gl, n);
    if (isa >= SMML_ISA_AVX2)
        return smml_partition_pairs_avx2(si, rs, ti, tr, gl, n);
#else
    (void) level;
#endif
    smml_partition_rest(si, rs, ti, tr, gl, 0, n, &q, &r);
    if (r >= SMML_PARTITION_MEMCPY) {
        memcpy(si + q, ti, (size_t) r * sizeof(int32_t));
        memcpy(rs + q, tr, (size_t) r * sizeof(int32_t));
        return q;
    }
    for (p = 0; p < r; p++) {
        /* the empty asm hides p from the loop-distribution pass, which otherwise turns this
           loop into two memmove calls: a call each for segments of a few pairs */
        SMML_OPAQUE(p);
        si[q + p] = ti[p];
        rs[q + p] = tr[p];
    }
    return q;
}

/* smml_split_sums: the sums of the exact tree splitter's scan (smml._core._tree._scan_exact)
 * at up to cap consecutive positions from p (< pend) of a feature's sorted segment, into ca
 * (kind 0, two classes: class 0's weight; kind 1: the sum of w y), cb (class 1's weight), cw
 * (the weight) and cok (a candidate: the next rank differs and nl >= msl). pair[2i], pair[2i+1]:
 * sample i's terms (kind 0: w [y = 0], w [y = 1], one of them 0; kind 1: w, w y), one load per
 * sample. st holds the running sums (class 0 or w y, class 1, weight) and nl the positions so
 * far, both carried from chunk to chunk. Each sum adds in position order, as the scalar loop
 * over left[y_i] += w_i does: the other class's sum gets + 0.0 (the same value) and the weight
 * c0 + c1 = w_i exactly. Stops (*stop = 1) at the first position that leaves fewer than msl
 * on the right (none after it is a candidate). Returns the positions written. */
static inline ptrdiff_t smml_split_sums(int kind, const int32_t *SMML_RESTRICT si,
                                        const int32_t *SMML_RESTRICT rs, ptrdiff_t p, ptrdiff_t pend,
                                        const double *SMML_RESTRICT pair, double *st, ptrdiff_t *nl,
                                        ptrdiff_t nn, ptrdiff_t msl, double *SMML_RESTRICT ca,
                                        double *SMML_RESTRICT cb, double *SMML_RESTRICT cw,
                                        uint8_t *SMML_RESTRICT cok, ptrdiff_t cap, int *stop)
{
    double a = st[0], b = st[1], W = st[2];
    ptrdiff_t m = 0, k = *nl;
    for (; p < pend && m < cap; p++) {
        const double *t = pair + 2 * (ptrdiff_t) si[p];
        double c0 = t[0], c1 = t[1];
        if (kind == 0) {
            a += c0;
            b += c1;
            W += c0 + c1;
        } else {
            W += c0;
            a += c1;
        }
        k++;
        if (nn - k < msl) {
            *stop = 1;
            break;
        }
        ca[m] = a;
        cb[m] = b;
        cw[m] = W;
        cok[m] = (uint8_t) ((rs[p + 1] > rs[p]) & (k >= msl));
        m++;
    }
    st[0] = a;
    st[1] = b;
    st[2] = W;
    *nl = k;
    return m;
}

/* smml_first_min: the first position j of c[0..m-1] holding the smallest value below *best,
 * which becomes c[j]; -1 (and *best unchanged) when none is below it. The same result as the
 * loop "if c[j] < best: best = c[j], keep j" in position order (a NaN is never taken; of
 * equal values, -0.0 and 0.0 included, the first): the minimum found with four running
 * minima (no chain of dependent compares through one), then its first position. */
static inline ptrdiff_t smml_first_min(const double *SMML_RESTRICT c, ptrdiff_t m, double *best)
{
    double b0 = *best, b1 = b0, b2 = b0, b3 = b0;
    ptrdiff_t j;
    for (j = 0; j + 4 <= m; j += 4) {
        b0 = c[j] < b0 ? c[j] : b0;
        b1 = c[j + 1] < b1 ? c[j + 1] : b1;
        b2 = c[j + 2] < b2 ? c[j + 2] : b2;
        b3 = c[j + 3] < b3 ? c[j + 3] : b3;
    }
    for (; j < m; j++)
        b0 = c[j] < b0 ? c[j] : b0;
    b0 = b1 < b0 ? b1 : b0;
    b0 = b2 < b0 ? b2 : b0;
    b0 = b3 < b0 ? b3 : b0;
    if (!(b0 < *best))
        return -1;
    for (j = 0; c[j] != b0; j++)
        ;
    *best = c[j];
    return j;
}

/* smml_split_sums_k, smml_split_costs_k: smml_split_sums and smml_split_costs for K classes
 * (gini), 3 <= K <= 8. pair[2i] = w_i, pair[2i+1] = its class (as a double). left[0..K-1] and
 * *W hold the running sums; the class sums at each position go to ca[k * cap + m] (column k of the
 * chunk), and the costs are those of cost_lr: per side s = 0, s = s + w_k w_k over k in
 * order, W - s / W (0 where W <= 0). sums holds 2 cap doubles of scratch. */

static SMML_ALWAYS_INLINE ptrdiff_t smml_split_sums_kc(ptrdiff_t K, const int32_t *SMML_RESTRICT si,
                                                       const int32_t *SMML_RESTRICT rs, ptrdiff_t p,
                                                       ptrdiff_t pend, const double *SMML_RESTRICT pair,
                                                       double *SMML_RESTRICT left, double *Wp, ptrdiff_t *nl,
                                                       ptrdiff_t nn, ptrdiff_t msl, double *SMML_RESTRICT ca,
                                                       double *SMML_RESTRICT cw, uint8_t *SMML_RESTRICT cok,
                                                       ptrdiff_t cap, int *stop)
{
    /* K a constant where the switch below calls it: the class sums stay in registers, the
       class's gets w and the others + 0.0 (the same values), selected on the bits */
    double W = *Wp, l[8];
    ptrdiff_t m = 0, k = *nl, c;
    for (c = 0; c < K; c++)
        l[c] = left[c];
    for (; p < pend && m < cap; p++) {
        const double *t = pair + 2 * (ptrdiff_t) si[p];
        double wi = t[0];
        ptrdiff_t y = (ptrdiff_t) t[1];
        for (c = 0; c < K; c++)
            l[c] += smml_from_bits(smml_bits(wi) & -(uint64_t) (y == c));
        W += wi;
        k++;
        if (nn - k < msl) {
            *stop = 1;
            break;
        }
        for (c = 0; c < K; c++)
            ca[c * cap + m] = l[c];
        cw[m] = W;
        cok[m] = (uint8_t) ((rs[p + 1] > rs[p]) & (k >= msl));
        m++;
    }
    for (c = 0; c < K; c++)
        left[c] = l[c];
    *Wp = W;
    *nl = k;
    return m;
}

static inline ptrdiff_t smml_split_sums_k(ptrdiff_t K, const int32_t *SMML_RESTRICT si,
                                          const int32_t *SMML_RESTRICT rs, ptrdiff_t p, ptrdiff_t pend,
                                          const double *SMML_RESTRICT pair, double *SMML_RESTRICT left,
                                          double *Wp, ptrdiff_t *nl, ptrdiff_t nn, ptrdiff_t msl,
                                          double *SMML_RESTRICT ca, double *SMML_RESTRICT cw,
                                          uint8_t *SMML_RESTRICT cok, ptrdiff_t cap, int *stop)
{
#define SMML_SUMS_K(KK) smml_split_sums_kc(KK, si, rs, p, pend, pair, left, Wp, nl, nn, msl, ca, cw, cok, cap, stop)
    switch (K) {
    case 3: return SMML_SUMS_K(3);
    case 4: return SMML_SUMS_K(4);
    case 5: return SMML_SUMS_K(5);
    case 6: return SMML_SUMS_K(6);
    case 7: return SMML_SUMS_K(7);
    default: return SMML_SUMS_K(8);
    }
#undef SMML_SUMS_K
}

/* the functions below, compiled portable (_base) and, with SMML_X86_DISPATCH, for
 * AVX2 (_avx2); the name without a suffix calls the copy of smml_isa() (smml_platform.h) */
#define SMML_CLONE_SELF "smml_tree.h"
#include "smml_clones.h"
#define smml_split_costs_k(...) SMML_PICK(smml_split_costs_k, __VA_ARGS__)
#define smml_split_costs(...) SMML_PICK(smml_split_costs, __VA_ARGS__)


#endif  /* SMML_SIMD_TREE_H */

#else   /* SMML_CLONE_PASS: the multi-versioned functions */


SMML_CLONED void SMML_SFX(smml_split_costs_k)(ptrdiff_t K, const double *SMML_RESTRICT ca,
                                           const double *SMML_RESTRICT WL,
                                           const uint8_t *SMML_RESTRICT ok, ptrdiff_t m, ptrdiff_t cap,
                                           const double *SMML_RESTRICT tot, double WT,
                                           double *SMML_RESTRICT sums, double *SMML_RESTRICT out)
{
    double *sl = sums, *sr = sums + cap;
    ptrdiff_t j, c;
    for (j = 0; j < m; j++) {
        sl[j] = 0.0;
        sr[j] = 0.0;
    }
    for (c = 0; c < K; c++) {
        const double *col = ca + c * cap;
        const double t = tot[c];
        for (j = 0; j < m; j++) {
            double a = col[j], b = t - a;
            sl[j] = sl[j] + a * a;
            sr[j] = sr[j] + b * b;
        }
    }
    for (j = 0; j < m; j++) {
        double wl = WL[j], wr = WT - wl;
        double cl = wl - sl[j] / wl, cr = wr - sr[j] / wr;
        cl = smml_select(smml_positive_mask(wl), cl, 0.0);
        cr = smml_select(smml_positive_mask(wr), cr, 0.0);
        out[j] = smml_select(-(uint64_t) (ok[j] != 0), cl + cr, INFINITY);
    }
}

/* smml_split_costs: the costs of m candidate positions of the exact tree splitter's scan
 * (smml._core._tree._scan_exact) at once, bit for bit those of _criterion.pxd's scalar functions
 * (the same operations in the same order, -ffp-contract=off), so that the divisions run as
 * vectors. Position j: the left side's sums a[j] (and b[j]) and weight WL[j]; the right
 * side's are the node's totals minus them.
 *   kind 0 (two classes, gini; a, b the classes' weights): cost_lr = c(left) + c(right),
 *          c = W - (w0 w0 + w1 w1) / W, and 0 where W <= 0;
 *   kind 1 (regression; a the sum of w y): score_reg = -(SL^2 / WL + SR^2 / WR), each term
 *          only where its W > 0.
 * ok[j] == 0: not a candidate, out[j] = +inf. W <= 0 is tested on the bits (positive doubles
 * order as integers), the selects are made on the bits: both vectorise. */
SMML_CLONED void SMML_SFX(smml_split_costs)(int kind, const double *SMML_RESTRICT a,
                                         const double *SMML_RESTRICT b,
                                         const double *SMML_RESTRICT WL, const uint8_t *SMML_RESTRICT ok,
                                         ptrdiff_t m, double ta, double tb, double WT,
                                         double *SMML_RESTRICT out)
{
    ptrdiff_t j;
    if (kind == 0) {
        for (j = 0; j < m; j++) {
            double wl = WL[j], wr = WT - wl;
            double a0 = a[j], a1 = b[j], b0 = ta - a0, b1 = tb - a1;
            double cl = wl - (a0 * a0 + a1 * a1) / wl;
            double cr = wr - (b0 * b0 + b1 * b1) / wr;
            cl = smml_select(smml_positive_mask(wl), cl, 0.0);
            cr = smml_select(smml_positive_mask(wr), cr, 0.0);
            out[j] = smml_select(-(uint64_t) (ok[j] != 0), cl + cr, INFINITY);
        }
    } else {
        for (j = 0; j < m; j++) {
            double wl = WL[j], wr = WT - wl, sl = a[j], sr = ta - sl;
            double tl = smml_select(smml_positive_mask(wl), sl * sl / wl, 0.0);
            double tr = smml_select(smml_positive_mask(wr), sr * sr / wr, 0.0);
            out[j] = smml_select(-(uint64_t) (ok[j] != 0), -((0.0 + tl) + tr), INFINITY);
        }
    }
}


#endif  /* SMML_CLONE_PASS */
