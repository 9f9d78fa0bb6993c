/* Branch-free selects on the bits of doubles, which gcc vectorises (integer compares and
 * masks instead of branches): used by the elementary functions (_exp.h), the boosting losses
 * (_simd_gbm.h) and the tree splitter's costs (_simd_tree.h). */
#ifndef SMML_BITS_H
#define SMML_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint64_t smml_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline double smml_from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* mask ? a : b, mask all ones or zero: the selects in integer bits, which gcc vectorises
 * where a floating-point select feeding arithmetic stays a branch. */
static inline double smml_select(uint64_t mask, double a, double b)
{
    return smml_from_bits((smml_bits(a) & mask) | (smml_bits(b) & ~mask));
}

/* all ones when f's sign bit is set (f < 0 or -0) */
static inline uint64_t smml_sign_mask(double f)
{
    return (uint64_t) ((int64_t) smml_bits(f) >> 63);
}

/* all ones when w > 0, tested on the bits (positive doubles order as integers; a NaN with its
   sign bit clear counts as positive, as in the scalar code's `if W <= 0: 0`) */
static inline uint64_t smml_positive_mask(double w)
{
    return -(uint64_t) ((int64_t) smml_bits(w) > 0);
}

#endif
