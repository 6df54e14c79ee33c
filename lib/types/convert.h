/* Element conversions between dtypes (see convert.c for the rules). */
#ifndef C10C_CONVERT_H
#define C10C_CONVERT_H

#include "c10c/dtype.h"
#include "internal.h"

/* Whether copies convert to and from t (bool, integers, Half, BFloat16, the five Float8 formats,
 * float, double, complex). */
bool c10c__convertible(c10c_dtype t);

/* n elements from src (byte stride src_stride, 0 repeats one) converted into dst. */
void c10c__convert_run(char *dst, int64_t dst_stride, c10c_dtype dst_type, const char *src,
                       int64_t src_stride, c10c_dtype src_type, int64_t n);

#endif /* C10C_CONVERT_H */
