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
 * si, rs never pass the reads. With AVX-512 (simd != 0 and the CPU has it) 16 pairs at a
 * time: the samples' flags gathered, each side's pairs compressed into the front of a
 * vector and stored whole. The same result.
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
#define SMML_PARTITION_AVX512 1
#endif

/* the portable path's copy back of the second side: memcpy from this many pairs on, a loop
 * below (most segments are a few pairs long) */
#define SMML_PARTITION_MEMCPY 64

static inline ptrdiff_t smml_partition_pairs(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                             int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t n,
                                             int simd)
{
    ptrdiff_t p, q = 0, r = 0;
#ifdef SMML_PARTITION_AVX512
    if (simd && smml_isa() >= SMML_ISA_AVX512)
        return smml_partition_pairs_avx512(si, rs, ti, tr, gl, n);
#else
    (void) simd;
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
