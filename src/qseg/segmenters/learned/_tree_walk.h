/* Complete trees (node i has children 2i + 1 and 2i + 2; a walk takes ``depth`` steps)
 * walked eight at a time: the eight walks do not depend on each other, so with their nodes
 * in eight registers the processor overlaps their loads instead of waiting on each in turn.
 *
 * A step reads a doubled row: its first half is the row with missing values (NaN) as -inf,
 * the second half with them as +inf, and a node that sends a missing value right reads the
 * second half (its feature index is offset by the row's width). So a step is one comparison,
 * ``value >= threshold``, and goes where XGBoost's ``value < threshold`` (missing: the
 * node's default) goes. The leaves are added to the total one at a time in tree order, as
 * XGBoost adds them (float32), so the sum is the same to the bit. */

#ifndef QSEG_TREE_WALK_H
#define QSEG_TREE_WALK_H

#include <stddef.h>
#include <stdint.h>

#define QSEG_STEP(t, f, n) (2 * (n) + 1 + (size_t)(doubled[(f)[n]] >= (t)[n]))

static inline __attribute__((always_inline)) float
qseg_trees_sum_at(const float *thresholds, const uint32_t *features, const float *leaves,
                  ptrdiff_t count, const int depth, float total, const float *doubled)
{
    const ptrdiff_t inner = ((ptrdiff_t)1 << depth) - 1;
    ptrdiff_t i = 0;
    int d;
    for (; i + 8 <= count; i += 8) {
        const float *t = thresholds + i * inner;
        const uint32_t *f = features + i * inner;
        const float *l = leaves + i * (inner + 1) - inner;
        size_t n0 = 0, n1 = 0, n2 = 0, n3 = 0, n4 = 0, n5 = 0, n6 = 0, n7 = 0;
#pragma GCC unroll 8
        for (d = 0; d < depth; d++) {
            n0 = QSEG_STEP(t, f, n0);
            n1 = QSEG_STEP(t + inner, f + inner, n1);
            n2 = QSEG_STEP(t + 2 * inner, f + 2 * inner, n2);
            n3 = QSEG_STEP(t + 3 * inner, f + 3 * inner, n3);
            n4 = QSEG_STEP(t + 4 * inner, f + 4 * inner, n4);
            n5 = QSEG_STEP(t + 5 * inner, f + 5 * inner, n5);
            n6 = QSEG_STEP(t + 6 * inner, f + 6 * inner, n6);
            n7 = QSEG_STEP(t + 7 * inner, f + 7 * inner, n7);
        }
        total = total + l[n0];
        total = total + l[(inner + 1) + n1];
        total = total + l[2 * (inner + 1) + n2];
        total = total + l[3 * (inner + 1) + n3];
        total = total + l[4 * (inner + 1) + n4];
        total = total + l[5 * (inner + 1) + n5];
        total = total + l[6 * (inner + 1) + n6];
        total = total + l[7 * (inner + 1) + n7];
    }
    for (; i < count; i++) {
        size_t node = 0;
        for (d = 0; d < depth; d++)
            node = QSEG_STEP(thresholds + i * inner, features + i * inner, node);
        total = total + leaves[i * (inner + 1) + node - inner];
    }
    return total;
}

/* The walk compiled for the common depths: with the depth a constant, the eight trees'
 * nodes are at constant offsets from one pointer and the levels unroll, so the eight walks
 * keep their nodes in registers (a depth known only at run time spilled the eight trees'
 * pointers to the stack, a reload at every step). */
static float qseg_trees_sum(const float *thresholds, const uint32_t *features,
                            const float *leaves, ptrdiff_t count, int depth, float total,
                            const float *doubled)
{
    switch (depth) {
    case 4:
        return qseg_trees_sum_at(thresholds, features, leaves, count, 4, total, doubled);
    case 5:
        return qseg_trees_sum_at(thresholds, features, leaves, count, 5, total, doubled);
    case 6:
        return qseg_trees_sum_at(thresholds, features, leaves, count, 6, total, doubled);
    default:
        return qseg_trees_sum_at(thresholds, features, leaves, count, depth, total, doubled);
    }
}

#undef QSEG_STEP
#endif
