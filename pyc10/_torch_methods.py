"""torch.Tensor's method names that pyc10 deliberately lacks: math kernels and autograd.

Data only, generated once from torch 2.13 (pyc10 never imports torch): the names in
``dir(torch.Tensor)`` that pyc10.Tensor does not have and that compute values (elementwise,
reductions, comparisons, linear algebra, random fills, sorting, gather/scatter and the other
copies that need a kernel) or belong to autograd. ``Tensor.__getattr__`` raises
:class:`pyc10.C10NoMathError` for them, as the operators raise for ``t + 1``;
tests/python/test_torch_names.py checks the lists against torch's ``dir(torch.Tensor)``.
"""

from __future__ import annotations

__all__ = ["AUTOGRAD_METHODS", "MATH_METHODS"]

#: torch.Tensor's math methods (404 names)
MATH_METHODS: frozenset[str] = frozenset(
    {
    "abs", "abs_", "absolute", "absolute_", "acos", "acos_", "acosh", "acosh_", "add", "add_",
    "addbmm", "addbmm_", "addcdiv", "addcdiv_", "addcmul", "addcmul_", "addmm", "addmm_",
    "addmv", "addmv_", "addr", "addr_", "all", "allclose", "amax", "amin", "aminmax", "angle",
    "any", "apply_", "arccos", "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_", "arcsinh",
    "arcsinh_", "arctan", "arctan2", "arctan2_", "arctan_", "arctanh", "arctanh_", "argmax",
    "argmin", "argsort", "argwhere", "as_strided_scatter", "asin", "asin_", "asinh", "asinh_",
    "atan", "atan2", "atan2_", "atan_", "atanh", "atanh_", "baddbmm", "baddbmm_", "bernoulli",
    "bernoulli_", "bincount", "bitwise_and", "bitwise_and_", "bitwise_left_shift",
    "bitwise_left_shift_", "bitwise_not", "bitwise_not_", "bitwise_or", "bitwise_or_",
    "bitwise_right_shift", "bitwise_right_shift_", "bitwise_xor", "bitwise_xor_", "bmm",
    "cauchy_", "ceil", "ceil_", "cholesky", "cholesky_inverse", "cholesky_solve", "clamp",
    "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "clip", "clip_",
    "conj_physical", "conj_physical_", "copysign", "copysign_", "corrcoef", "cos", "cos_",
    "cosh", "cosh_", "count_nonzero", "cov", "cross", "cummax", "cummin", "cumprod", "cumprod_",
    "cumsum", "cumsum_", "deg2rad", "deg2rad_", "det", "diag", "diag_embed", "diagflat",
    "diagonal_scatter", "diff", "digamma", "digamma_", "dist", "div", "div_", "divide",
    "divide_", "dot", "eig", "eq", "eq_", "equal", "erf", "erf_", "erfc", "erfc_", "erfinv",
    "erfinv_", "exp", "exp2", "exp2_", "exp_", "expm1", "expm1_", "exponential_",
    "fill_diagonal_", "fix", "fix_", "flip", "fliplr", "flipud", "float_power", "float_power_",
    "floor", "floor_", "floor_divide", "floor_divide_", "fmax", "fmin", "fmod", "fmod_", "frac",
    "frac_", "frexp", "gather", "gcd", "gcd_", "ge", "ge_", "geometric_", "geqrf", "ger",
    "greater", "greater_", "greater_equal", "greater_equal_", "gt", "gt_", "hardshrink",
    "hash_tensor", "heaviside", "heaviside_", "histc", "histogram", "hypot", "hypot_", "i0",
    "i0_", "igamma", "igamma_", "igammac", "igammac_", "index", "index_add", "index_add_",
    "index_copy", "index_copy_", "index_fill", "index_fill_", "index_put", "index_put_",
    "index_reduce", "index_reduce_", "index_select", "inner", "inverse", "isclose", "isfinite",
    "isinf", "isnan", "isneginf", "isposinf", "isreal", "istft", "kron", "kthvalue", "lcm",
    "lcm_", "ldexp", "ldexp_", "le", "le_", "lerp", "lerp_", "less", "less_", "less_equal",
    "less_equal_", "lgamma", "lgamma_", "log", "log10", "log10_", "log1p", "log1p_", "log2",
    "log2_", "log_", "log_normal_", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp",
    "logdet", "logical_and", "logical_and_", "logical_not", "logical_not_", "logical_or",
    "logical_or_", "logical_xor", "logical_xor_", "logit", "logit_", "logsumexp", "lstsq", "lt",
    "lt_", "lu", "lu_solve", "map2_", "map_", "masked_fill", "masked_fill_", "masked_scatter",
    "masked_scatter_", "masked_select", "matmul", "matrix_exp", "matrix_power", "max",
    "maximum", "mean", "median", "min", "minimum", "mm", "mode", "msort", "mul", "mul_",
    "multinomial", "multiply", "multiply_", "mv", "mvlgamma", "mvlgamma_", "nan_to_num",
    "nan_to_num_", "nanmean", "nanmedian", "nanquantile", "nansum", "ne", "ne_", "neg", "neg_",
    "negative", "negative_", "nextafter", "nextafter_", "nonzero", "nonzero_static", "norm",
    "normal_", "not_equal", "not_equal_", "orgqr", "ormqr", "outer", "pinverse", "polygamma",
    "polygamma_", "positive", "pow", "pow_", "prelu", "prod", "put", "put_", "qr", "quantile",
    "rad2deg", "rad2deg_", "random_", "reciprocal", "reciprocal_", "relu", "relu_", "remainder",
    "remainder_", "renorm", "renorm_", "repeat", "repeat_interleave", "roll", "rot90", "round",
    "round_", "rsqrt", "rsqrt_", "scatter", "scatter_", "scatter_add", "scatter_add_",
    "scatter_reduce", "scatter_reduce_", "select_scatter", "sgn", "sgn_", "sigmoid", "sigmoid_",
    "sign", "sign_", "signbit", "sin", "sin_", "sinc", "sinc_", "sinh", "sinh_",
    "slice_inverse", "slice_scatter", "slogdet", "softmax", "solve", "sort", "sqrt", "sqrt_",
    "square", "square_", "std", "stft", "sub", "sub_", "subtract", "subtract_", "sum",
    "sum_to_size", "svd", "symeig", "take", "take_along_dim", "tan", "tan_", "tanh", "tanh_",
    "tile", "topk", "trace", "triangular_solve", "tril", "tril_", "triu", "triu_",
    "true_divide", "true_divide_", "trunc", "trunc_", "uniform_", "unique",
    "unique_consecutive", "var", "vdot", "where", "xlogy", "xlogy_",
    }
)  # fmt: skip

#: torch.Tensor's autograd methods and attributes (12 names)
AUTOGRAD_METHODS: frozenset[str] = frozenset(
    {
    "backward", "grad_dtype", "name", "output_nr", "register_hook",
    "register_post_accumulate_grad_hook", "reinforce", "resize", "resize_as", "retain_grad",
    "retains_grad", "volatile",
    }
)  # fmt: skip
