/* Reductions on C long double (x87 80-bit extended) and IEEE binary128 (gfortran
 * REAL(16)), with their complex forms. Rust has no such float types, so this is the one
 * place crossmpi does floating-point arithmetic in C. Buffers are packed streams and may
 * be unaligned, hence the memcpy loads and stores. */
#include <stddef.h>
#include <string.h>

enum { OP_SUM = 0, OP_PROD = 1, OP_MIN = 2, OP_MAX = 3 };

/* Bytes of value in a 16-byte slot: a long double holds 10, and the other 6 are
 * whatever the FPU left; they are stored as zeros to keep results deterministic and
 * never leak stack contents into messages. */
#define LONG_DOUBLE_BYTES 10
#define FLOAT128_BYTES 16

static void store16(unsigned char *dst, const void *value, size_t value_bytes) {
    unsigned char slot[16] = {0};
    memcpy(slot, value, value_bytes);
    memcpy(dst, slot, 16);
}

#define REAL_OP(name, T, BYTES)                                                 \
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
            store16(inout + i * 16, &r, BYTES);                                 \
        }                                                                       \
    }

/* Complex numbers as two reals: (a + bi)(c + di) = (ac - bd) + (ad + bc)i. */
#define COMPLEX_OP(name, T, BYTES)                                              \
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
            store16(inout + i * 32, &re, BYTES);                                \
            store16(inout + i * 32 + 16, &im, BYTES);                           \
        }                                                                       \
    }

REAL_OP(crossmpi_long_double_op, long double, LONG_DOUBLE_BYTES)
REAL_OP(crossmpi_float128_op, __float128, FLOAT128_BYTES)
COMPLEX_OP(crossmpi_long_double_complex_op, long double, LONG_DOUBLE_BYTES)
COMPLEX_OP(crossmpi_float128_complex_op, __float128, FLOAT128_BYTES)

/* -1, 0, 1 for a < b, a == b, a > b; 2 when unordered (a NaN). */
int crossmpi_long_double_cmp(const unsigned char *a, const unsigned char *b) {
    long double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
}
