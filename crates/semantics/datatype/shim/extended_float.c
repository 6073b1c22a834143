/* Reductions on C long double (x87 80-bit extended) and IEEE binary128 (gfortran
 * REAL(16)), with their complex forms. Rust has no such float types, so this is the one
 * place crossmpi does floating-point arithmetic in C. Buffers are packed streams and may
 * be unaligned, hence the memcpy loads and stores. */
#include <stddef.h>
#include <string.h>

enum { OP_SUM = 0, OP_PROD = 1, OP_MIN = 2, OP_MAX = 3 };

#define REAL_OP(name, T)                                                        \
    void name(int op, const unsigned char *in, unsigned char *inout, size_t n) { \
        for (size_t i = 0; i < n; i++) {                                        \
            T a, b, r;                                                          \
            memcpy(&a, in + i * 16, sizeof a);                                  \
            memcpy(&b, inout + i * 16, sizeof b);                               \
            switch (op) {                                                       \
            case OP_SUM: r = a + b; break;                                      \
            case OP_PROD: r = a * b; break;                                     \
            case OP_MIN: r = a < b ? a : b; break;                              \
            default: r = a > b ? a : b; break;                                  \
            }                                                                   \
            memcpy(inout + i * 16, &r, sizeof r);                               \
        }                                                                       \
    }

/* Complex numbers as two reals: (a + bi)(c + di) = (ac - bd) + (ad + bc)i. */
#define COMPLEX_OP(name, T)                                                     \
    void name(int op, const unsigned char *in, unsigned char *inout, size_t n) { \
        for (size_t i = 0; i < n; i++) {                                        \
            T a, b, c, d, re, im;                                               \
            memcpy(&a, in + i * 32, sizeof a);                                  \
            memcpy(&b, in + i * 32 + 16, sizeof b);                             \
            memcpy(&c, inout + i * 32, sizeof c);                               \
            memcpy(&d, inout + i * 32 + 16, sizeof d);                          \
            if (op == OP_SUM) {                                                 \
                re = a + c;                                                     \
                im = b + d;                                                     \
            } else {                                                            \
                re = a * c - b * d;                                             \
                im = a * d + b * c;                                             \
            }                                                                   \
            memcpy(inout + i * 32, &re, sizeof re);                             \
            memcpy(inout + i * 32 + 16, &im, sizeof im);                        \
        }                                                                       \
    }

REAL_OP(crossmpi_long_double_op, long double)
REAL_OP(crossmpi_float128_op, __float128)
COMPLEX_OP(crossmpi_long_double_complex_op, long double)
COMPLEX_OP(crossmpi_float128_complex_op, __float128)

/* -1, 0, 1 for a < b, a == b, a > b; 2 when unordered (a NaN). */
int crossmpi_long_double_cmp(const unsigned char *a, const unsigned char *b) {
    long double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
}
