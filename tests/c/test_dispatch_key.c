/* Dispatch keys and key sets: c10's numbering and bit layout, and the behaviours of
 * c10/test/core/DispatchKeySet_test.cpp. Python tests compare the same with torch itself. */
#include "harness.h"

#define DK(name) C10C_DISPATCH_KEY_##name

static c10c_dispatch_key_set set_of(const c10c_dispatch_key *keys, size_t n) {
  c10c_dispatch_key_set ks = {0};
  ASSERT_OK(c10c_dispatch_key_set_from_keys(&ks, keys, n));
  return ks;
}

#define SET(...)                                   \
  set_of((const c10c_dispatch_key[]){__VA_ARGS__}, \
         sizeof((c10c_dispatch_key[]){__VA_ARGS__}) / sizeof(c10c_dispatch_key))

static bool has(c10c_dispatch_key_set ks, c10c_dispatch_key k) {
  bool out = false;
  ASSERT_OK(c10c_dispatch_key_set_has(&out, ks, k));
  return out;
}

static void expect_keys(c10c_dispatch_key_set ks, const c10c_dispatch_key *expected, size_t n) {
  c10c_dispatch_key got[C10C_DISPATCH_KEY_SET_MAX_KEYS];
  size_t count = c10c_dispatch_key_set_to_array(got, C10C_DISPATCH_KEY_SET_MAX_KEYS, ks);
  ASSERT_EQ(count, n);
  for (size_t i = 0; i < n && i < count; i++) ASSERT_EQ(got[i], expected[i]);
}

#define EXPECT_KEYS(ks, ...)                                \
  expect_keys(ks, (const c10c_dispatch_key[]){__VA_ARGS__}, \
              sizeof((c10c_dispatch_key[]){__VA_ARGS__}) / sizeof(c10c_dispatch_key))

TEST(key_values_match_c10) {
  ASSERT_EQ(DK(DENSE), 1);
  ASSERT_EQ(DK(FAKE), 12);
  ASSERT_EQ(DK(PYTHON_DISPATCHER), 46);
  ASSERT_EQ(DK(CPU), 49);
  ASSERT_EQ(DK(META), 64);
  ASSERT_EQ(DK(QUANTIZED_CPU), 66);
  ASSERT_EQ(DK(AUTOGRAD_CPU), 134);
  ASSERT_EQ(DK(AUTOGRAD_META), 149);
  ASSERT_EQ(DK(AUTOGRAD), 150);
  ASSERT_EQ(DK(COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL), 155);
}

TEST(singletons_have_c10_raw_words) {
  ASSERT_EQ_U64(SET(DK(CPU)).repr, 0x10001);
  ASSERT_EQ_U64(SET(DK(CUDA)).repr, 0x10002);
  ASSERT_EQ_U64(SET(DK(META)).repr, 0x18000);
  ASSERT_EQ_U64(SET(DK(SPARSE_CPU)).repr, 0x800001);
  ASSERT_EQ_U64(SET(DK(AUTOGRAD_CPU)).repr, 0x1000000001);
  ASSERT_EQ_U64(SET(DK(AUTOGRAD_META)).repr, 0x1000008000);
  ASSERT_EQ_U64(SET(DK(AUTOGRAD)).repr, 0);
  ASSERT_EQ_U64(SET(DK(UNDEFINED)).repr, 0);
  ASSERT_EQ_U64(SET(DK(START_OF_QUANTIZED_BACKENDS)).repr, 0x100000); /* functionality only */
}

TEST(building_block_plus_backend_equals_runtime_key) {
  c10c_dispatch_key_set b;
  ASSERT_OK(c10c_dispatch_key_set_from_backend(&b, C10C_BACKEND_COMPONENT_CPU));
  c10c_dispatch_key_set dense = SET(DK(DENSE));
  ASSERT_TRUE(c10c_dispatch_key_set_equal(c10c_dispatch_key_set_union(b, dense), SET(DK(CPU))));
  ASSERT_OK(c10c_dispatch_key_set_from_backend(&b, C10C_BACKEND_COMPONENT_INVALID));
  ASSERT_TRUE(c10c_dispatch_key_set_is_empty(b));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_from_backend(&b, 17));
}

TEST(per_backend_keys_form_a_cross_product) {
  c10c_dispatch_key_set a = SET(DK(AUTOGRAD_CUDA), DK(CPU));
  c10c_dispatch_key_set b = SET(DK(CUDA), DK(AUTOGRAD_CPU));
  c10c_dispatch_key_set c = SET(DK(AUTOGRAD_CUDA), DK(AUTOGRAD_CPU), DK(CUDA), DK(CPU));
  ASSERT_TRUE(c10c_dispatch_key_set_equal(a, b));
  ASSERT_TRUE(c10c_dispatch_key_set_equal(a, c));
  c10c_dispatch_key_set d = SET(DK(CPU), DK(CUDA), DK(AUTOGRAD_CPU), DK(SPARSE_CPU));
  ASSERT_TRUE(has(d, DK(SPARSE_CUDA)));
  ASSERT_TRUE(has(d, DK(AUTOGRAD_CUDA)));
  EXPECT_KEYS(a, DK(CPU), DK(CUDA), DK(AUTOGRAD_CPU), DK(AUTOGRAD_CUDA));
}

TEST(remove_clears_functionality_bits_only) {
  c10c_dispatch_key_set d = SET(DK(CPU), DK(CUDA), DK(AUTOGRAD_CPU), DK(SPARSE_CPU)), r;
  ASSERT_OK(c10c_dispatch_key_set_remove(&r, d, DK(CPU)));
  EXPECT_KEYS(r, DK(SPARSE_CPU), DK(SPARSE_CUDA), DK(AUTOGRAD_CPU), DK(AUTOGRAD_CUDA));
  ASSERT_OK(c10c_dispatch_key_set_remove(&r, SET(DK(AUTOGRAD_META)), DK(AUTOGRAD_META)));
  ASSERT_EQ_U64(r.repr, 0x8000); /* the Meta backend bit stays */
  ASSERT_OK(c10c_dispatch_key_set_remove_backend(&r, r, C10C_BACKEND_COMPONENT_META));
  ASSERT_EQ_U64(r.repr, 0);
  ASSERT_TRUE(c10c_dispatch_key_set_equal(
      c10c_dispatch_key_set_difference(d, SET(DK(CUDA))),
      SET(DK(SPARSE_CPU), DK(SPARSE_CUDA), DK(AUTOGRAD_CPU), DK(AUTOGRAD_CUDA))));
}

TEST(every_functionality_key_adds_has_and_removes) {
  for (c10c_dispatch_key k = 1; k < DK(END_OF_FUNCTIONALITY_KEYS); k++) {
    c10c_dispatch_key_set empty = {0}, s, r;
    ASSERT_OK(c10c_dispatch_key_set_add(&s, empty, k));
    ASSERT_TRUE(has(s, k));
    ASSERT_EQ_U64(s.repr, UINT64_C(1) << (15 + k));
    ASSERT_OK(c10c_dispatch_key_set_remove(&r, s, k));
    ASSERT_TRUE(c10c_dispatch_key_set_is_empty(r));
  }
}

TEST(every_per_backend_runtime_key_is_functionality_plus_backend) {
  for (c10c_dispatch_key k = DK(START_OF_DENSE_BACKENDS); k <= DK(AUTOGRAD_META); k++) {
    c10c_backend_component b = c10c_dispatch_key_to_backend(k);
    if (b == C10C_BACKEND_COMPONENT_INVALID) continue;
    c10c_dispatch_key f = c10c_dispatch_key_to_functionality(k);
    ASSERT_TRUE(c10c_dispatch_key_is_per_backend_functionality(f));
    ASSERT_EQ(c10c_dispatch_key_for_backend(f, b), k);
    c10c_dispatch_key_set s = SET(k), r;
    ASSERT_EQ_U64(s.repr, (UINT64_C(1) << (15 + f)) | (UINT64_C(1) << (b - 1)));
    ASSERT_OK(c10c_dispatch_key_set_remove(&r, s, k));
    ASSERT_EQ_U64(r.repr, UINT64_C(1) << (b - 1));
    ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(s), k);
  }
}

TEST(full_set_iterates_every_runtime_key) {
  c10c_dispatch_key_set full = c10c_dispatch_key_set_full();
  ASSERT_EQ_U64(full.repr, UINT64_C(0x3FFFFFFFFFFFFFFF));
  ASSERT_EQ(c10c_dispatch_key_set_size(full), 136);
  for (c10c_dispatch_key k = 1; k < DK(END_OF_FUNCTIONALITY_KEYS); k++) ASSERT_TRUE(has(full, k));
  c10c_dispatch_key prev = DK(UNDEFINED);
  size_t n = 0;
  for (c10c_dispatch_key k = c10c_dispatch_key_set_next(full, DK(UNDEFINED)); k != DK(UNDEFINED);
       k = c10c_dispatch_key_set_next(full, k)) {
    ASSERT_FALSE(c10c_dispatch_key_is_per_backend_functionality(k));
    ASSERT_TRUE(k != prev);
    prev = k;
    n++;
  }
  ASSERT_EQ(n, 136);
}

TEST(iteration_order_is_c10s) {
  c10c_dispatch_key_set backends, s;
  ASSERT_OK(c10c_dispatch_key_set_from_backend(&backends, C10C_BACKEND_COMPONENT_CPU));
  ASSERT_OK(c10c_dispatch_key_set_from_backend(&s, C10C_BACKEND_COMPONENT_CUDA));
  backends = c10c_dispatch_key_set_union(backends, s);
  s = c10c_dispatch_key_set_union(backends, SET(DK(DENSE), DK(FPGA), DK(AUTOGRAD_FUNCTIONALITY)));
  EXPECT_KEYS(s, DK(CPU), DK(CUDA), DK(FPGA), DK(AUTOGRAD_CPU), DK(AUTOGRAD_CUDA));
  /* backend bits alone and per-backend functionalities without backends yield nothing */
  ASSERT_EQ(c10c_dispatch_key_set_size(backends), 0);
  ASSERT_EQ(c10c_dispatch_key_set_size(SET(DK(DENSE), DK(SPARSE))), 0);
  ASSERT_EQ(c10c_dispatch_key_set_next(SET(DK(FPGA)), DK(FPGA)), DK(UNDEFINED));
  ASSERT_EQ(c10c_dispatch_key_set_next(s, DK(AUTOGRAD)), DK(UNDEFINED));
  ASSERT_EQ(c10c_dispatch_key_set_next(s, 999), DK(UNDEFINED));
  ASSERT_EQ(c10c_dispatch_key_set_next(s, DK(DENSE)), DK(CPU));
  ASSERT_EQ(c10c_dispatch_key_set_to_array(NULL, 0, s), 5);
}

TEST(priority_queries) {
  c10c_dispatch_key_set cpu_tensor =
      SET(DK(CPU), DK(AD_INPLACE_OR_VIEW), DK(AUTOGRAD_CPU), DK(AUTOCAST_CPU));
  ASSERT_EQ_U64(cpu_tensor.repr, UINT64_C(0x9400010001));
  ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(cpu_tensor), DK(AUTOCAST_CPU));
  c10c_dispatch_key_set d = SET(DK(CPU), DK(CUDA), DK(SPARSE_CPU), DK(AUTOGRAD_CPU));
  ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(d), DK(AUTOGRAD_CUDA));
  ASSERT_EQ(c10c_dispatch_key_set_highest_backend(d), C10C_BACKEND_COMPONENT_CUDA);
  ASSERT_EQ(c10c_dispatch_key_set_highest_functionality(d), DK(AUTOGRAD_FUNCTIONALITY));
  ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(SET(DK(META))), DK(META));
  c10c_dispatch_key_set meta_bit;
  ASSERT_OK(c10c_dispatch_key_set_from_backend(&meta_bit, C10C_BACKEND_COMPONENT_META));
  ASSERT_EQ(c10c_dispatch_key_set_highest_functionality(meta_bit), DK(UNDEFINED));
  c10c_dispatch_key_set empty = {0};
  ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(empty), DK(UNDEFINED));
  ASSERT_EQ(c10c_dispatch_key_set_highest_priority_backend_key(SET(DK(CUDA), DK(QUANTIZED_CUDA))),
            DK(QUANTIZED_CUDA));
  ASSERT_EQ(
      c10c_dispatch_key_set_highest_priority_backend_key(SET(DK(FUNCTIONALIZE), DK(SPARSE_CUDA))),
      DK(SPARSE_CUDA));
}

TEST(dispatch_table_indices) {
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(CPU))), 1);
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(CUDA))), 2);
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(META))), 16);
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(FPGA))), 17);
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(QUANTIZED_CPU))), 20);
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(AUTOGRAD_CPU))), 96);
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(SET(DK(PYTHON_DISPATCHER))), 136);
  c10c_dispatch_key_set empty = {0};
  ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(empty), 0);
}

/* Regression (fuzz_parsers, corpus parsers/key_set_bit63_table_slot_138): a raw word with bit 62
 * or 63 gave dispatch table slot 137 or 138, past c10's 137-entry operator table, and a
 * "highest functionality" beyond the functionality keys. Those bits name no key: every query
 * leaves them out, as iteration and printing do. */
TEST(bits_62_and_63_name_no_key) {
  c10c_dispatch_key_set cpu = SET(DK(CPU));
  for (int bit = 62; bit < 64; bit++) {
    c10c_dispatch_key_set ks = c10c_dispatch_key_set_from_raw(cpu.repr | UINT64_C(1) << bit);
    ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(ks), 1);
    ASSERT_EQ(c10c_dispatch_key_set_highest_functionality(ks), DK(DENSE));
    ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(ks), DK(CPU));
    ASSERT_EQ(c10c_dispatch_key_set_size(ks), 1);
    char buf[64];
    ASSERT_OK(c10c_dispatch_key_set_to_string(buf, sizeof buf, NULL, ks));
    ASSERT_STR_EQ(buf, "DispatchKeySet(CPU)");
    c10c_dispatch_key_set only = c10c_dispatch_key_set_from_raw(UINT64_C(1) << bit);
    ASSERT_EQ(c10c_dispatch_key_set_dispatch_table_index(only), 0);
    ASSERT_EQ(c10c_dispatch_key_set_highest_priority_key(only), DK(UNDEFINED));
  }
}

TEST(names_and_parsing) {
  ASSERT_STR_EQ(c10c_dispatch_key_name(DK(AUTOGRAD_CUDA)), "AutogradCUDA");
  ASSERT_STR_EQ(c10c_dispatch_key_name(DK(START_OF_DENSE_BACKENDS)), "Undefined");
  ASSERT_STR_EQ(c10c_dispatch_key_name(DK(START_OF_QUANTIZED_BACKENDS)), "QuantizedUndefined");
  ASSERT_STR_EQ(c10c_dispatch_key_name(DK(END_OF_FUNCTIONALITY_KEYS)), "UnknownUnknown");
  ASSERT_STR_EQ(c10c_dispatch_key_name(500), "UnknownUnknown");
  c10c_dispatch_key k;
  ASSERT_OK(c10c_dispatch_key_parse(&k, "AutogradPrivateUse3"));
  ASSERT_EQ(k, DK(AUTOGRAD_PRIVATE_USE3));
  ASSERT_OK(c10c_dispatch_key_parse(&k, "CompositeImplicitAutograd"));
  ASSERT_EQ(k, DK(COMPOSITE_IMPLICIT_AUTOGRAD));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_dispatch_key_parse(&k, "AutogradHIP"));
  ASSERT_ERROR_MESSAGE("could not parse dispatch key: AutogradHIP");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_dispatch_key_parse(&k, "QuantizedUndefined"));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_parse(NULL, "CPU"));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_parse(&k, NULL));
  ASSERT_STR_EQ(c10c_backend_component_name(C10C_BACKEND_COMPONENT_MTIA), "MTIA");
  ASSERT_STR_EQ(c10c_backend_component_name(C10C_BACKEND_COMPONENT_META), "MetaBit");
  ASSERT_STR_EQ(c10c_backend_component_name(0), "InvalidBit");
  ASSERT_STR_EQ(c10c_backend_component_name(17), "UNKNOWN_BACKEND_BIT");
}

TEST(functionality_names_are_unique) {
  for (c10c_dispatch_key a = 1; a < DK(END_OF_FUNCTIONALITY_KEYS); a++)
    for (c10c_dispatch_key b = 1; b < a; b++)
      ASSERT_TRUE(strcmp(c10c_dispatch_key_name(a), c10c_dispatch_key_name(b)) != 0);
}

TEST(to_string_prints_in_iteration_order) {
  char buf[C10C_DISPATCH_KEY_SET_STRING_MAX];
  size_t len = 0;
  c10c_dispatch_key_set s =
      SET(DK(AUTOCAST_CPU), DK(AUTOGRAD_CPU), DK(AD_INPLACE_OR_VIEW), DK(CPU));
  ASSERT_OK(c10c_dispatch_key_set_to_string(buf, sizeof buf, &len, s));
  ASSERT_STR_EQ(buf, "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)");
  ASSERT_EQ(len, strlen(buf));
  c10c_dispatch_key_set empty = {0};
  ASSERT_OK(c10c_dispatch_key_set_to_string(buf, sizeof buf, NULL, empty));
  ASSERT_STR_EQ(buf, "DispatchKeySet()");
  char small[10];
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL,
                c10c_dispatch_key_set_to_string(small, sizeof small, &len, s));
  ASSERT_STR_EQ(small, "DispatchK");
  ASSERT_EQ(len, 62);
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_dispatch_key_set_to_string(NULL, 0, &len, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_to_string(NULL, 5, &len, s));
  ASSERT_OK(c10c_dispatch_key_set_to_string(buf, sizeof buf, &len, c10c_dispatch_key_set_full()));
  ASSERT_TRUE(len < C10C_DISPATCH_KEY_SET_STRING_MAX);
}

TEST(invalid_keys_are_errors) {
  c10c_dispatch_key_set s = {0};
  bool b;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_from_key(&s, 156));
  ASSERT_ERROR_MESSAGE("invalid dispatch key 156");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_set_from_key(&s, DK(END_OF_FUNCTIONALITY_KEYS)));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_add(&s, s, 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_remove(&s, s, 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_has(&b, s, 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_full_after(&s, 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_from_alias(&s, 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_alias_has(&b, 200, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_alias_has(&b, DK(AUTOGRAD), 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_alias_has(&b, DK(UNDEFINED), DK(CPU)));
  ASSERT_ERROR_MESSAGE("runtimeDispatchKeySetHas: the alias key must not be Undefined");
  /* 47 (EndOfFunctionalityKeys) names no key: refused wherever a key is put in or looked up in
   * a set; full_after computes from it as c10 does */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_set_has(&b, s, DK(END_OF_FUNCTIONALITY_KEYS)));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_set_from_alias(&s, DK(END_OF_FUNCTIONALITY_KEYS)));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_alias_has(&b, DK(AUTOGRAD), DK(END_OF_FUNCTIONALITY_KEYS)));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_set_backend_from_autograd(&s, DK(END_OF_FUNCTIONALITY_KEYS)));
  ASSERT_OK(c10c_dispatch_key_set_full_after(&s, DK(END_OF_FUNCTIONALITY_KEYS)));
  ASSERT_EQ_U64(s.repr, c10c_dispatch_key_set_full().repr);
  s.repr = 0;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_backend_from_autograd(&s, 200));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_remove_backend(&s, s, 17));
  c10c_dispatch_key bad[] = {DK(CPU), 300};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_from_keys(&s, bad, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_from_keys(&s, NULL, 2));
  ASSERT_OK(c10c_dispatch_key_set_from_keys(&s, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_from_key(NULL, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_has(NULL, s, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_add(NULL, s, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_remove(NULL, s, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_remove_backend(NULL, s, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_from_backend(NULL, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_full_after(NULL, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_from_alias(NULL, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_alias_has(NULL, DK(AUTOGRAD), DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_dispatch_key_set_backend_from_autograd(NULL, DK(CPU)));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_set_for_tensor(NULL, 6, 0, 0, false));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dispatch_key_compute(NULL, 6, 0, 0));
}

TEST(undefined_and_alias_keys_are_vacuously_contained) {
  bool b = false;
  c10c_dispatch_key_set empty = {0};
  ASSERT_OK(c10c_dispatch_key_set_has(&b, empty, DK(UNDEFINED)));
  ASSERT_TRUE(b);
  ASSERT_OK(c10c_dispatch_key_set_has(&b, empty, DK(AUTOGRAD)));
  ASSERT_TRUE(b);
}

TEST(alias_sets_match_c10) {
  c10c_dispatch_key_set s;
  ASSERT_OK(c10c_dispatch_key_set_from_alias(&s, DK(AUTOGRAD)));
  ASSERT_EQ_U64(s.repr, UINT64_C(0x380000FFFF));
  ASSERT_OK(c10c_dispatch_key_set_from_alias(&s, DK(COMPOSITE_IMPLICIT_AUTOGRAD)));
  ASSERT_EQ_U64(s.repr, UINT64_C(0x3803FFFFFF));
  ASSERT_OK(c10c_dispatch_key_set_from_alias(&s, DK(COMPOSITE_EXPLICIT_AUTOGRAD)));
  ASSERT_EQ_U64(s.repr, UINT64_C(0x1FFFFFF));
  ASSERT_OK(c10c_dispatch_key_set_from_alias(&s, DK(COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL)));
  ASSERT_EQ_U64(s.repr, UINT64_C(0x17FFDF7));
  ASSERT_OK(c10c_dispatch_key_set_from_alias(&s, DK(FUNC_TORCH_BATCHED_DECOMPOSITION)));
  ASSERT_TRUE(c10c_dispatch_key_set_equal(s, SET(DK(FUNC_TORCH_BATCHED))));
  ASSERT_OK(c10c_dispatch_key_set_from_alias(&s, DK(CPU)));
  ASSERT_TRUE(c10c_dispatch_key_set_equal(s, SET(DK(CPU))));
  ASSERT_OK(c10c_dispatch_key_set_full_after(&s, DK(AUTOGRAD_OTHER)));
  ASSERT_EQ_U64(s.repr, UINT64_C(0x20000007FFFFFFFF));
}

TEST(alias_membership_matrix) {
  static const c10c_dispatch_key aliases[] = {DK(AUTOGRAD),
                                              DK(COMPOSITE_IMPLICIT_AUTOGRAD),
                                              DK(FUNC_TORCH_BATCHED_DECOMPOSITION),
                                              DK(COMPOSITE_IMPLICIT_AUTOGRAD_NESTED_TENSOR),
                                              DK(COMPOSITE_EXPLICIT_AUTOGRAD),
                                              DK(COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL)};
  static const struct {
    c10c_dispatch_key k;
    bool in[6];
  } rows[] = {
      {DK(CPU), {0, 1, 0, 0, 1, 1}},
      {DK(AUTOGRAD_CPU), {1, 1, 0, 0, 0, 0}},
      {DK(NESTED_TENSOR_CPU), {0, 1, 0, 1, 0, 0}},
      {DK(SPARSE_CPU), {0, 1, 0, 0, 1, 0}},
      {DK(FPGA), {0, 1, 0, 0, 1, 1}},
      {DK(AUTOGRAD_OTHER), {1, 1, 0, 0, 0, 0}},
      {DK(XLA), {0, 1, 0, 0, 1, 0}},
      {DK(FUNCTIONALIZE), {0, 0, 0, 0, 0, 0}},
      {DK(FUNC_TORCH_BATCHED), {0, 0, 1, 0, 0, 0}},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
    for (size_t a = 0; a < 6; a++) {
      bool b = !rows[r].in[a];
      ASSERT_OK(c10c_dispatch_key_alias_has(&b, aliases[a], rows[r].k));
      if (b != rows[r].in[a])
        FAIL_AT("alias %s, key %s: got %d", c10c_dispatch_key_name(aliases[a]),
                c10c_dispatch_key_name(rows[r].k), (int)b);
    }
  bool b = false;
  ASSERT_OK(c10c_dispatch_key_alias_has(&b, DK(CPU), DK(CPU)));
  ASSERT_TRUE(b);
}

TEST(backend_and_autograd_relations) {
  c10c_dispatch_key_set s;
  ASSERT_OK(c10c_dispatch_key_set_backend_from_autograd(&s, DK(AUTOGRAD_MAIA)));
  ASSERT_TRUE(c10c_dispatch_key_set_equal(s, SET(DK(MAIA))));
  ASSERT_OK(c10c_dispatch_key_set_backend_from_autograd(&s, DK(AUTOGRAD_HIP)));
  ASSERT_TRUE(c10c_dispatch_key_set_is_empty(s));
  ASSERT_OK(c10c_dispatch_key_set_backend_from_autograd(&s, DK(AUTOGRAD_MTIA)));
  ASSERT_TRUE(c10c_dispatch_key_set_is_empty(s));
  ASSERT_OK(c10c_dispatch_key_set_backend_from_autograd(&s, DK(AUTOGRAD_NESTED_TENSOR)));
  ASSERT_EQ_U64(s.repr, 0x200FFFF);
  ASSERT_OK(c10c_dispatch_key_set_backend_from_autograd(&s, DK(AUTOGRAD_OTHER)));
  ASSERT_EQ_U64(s.repr, 0x1FEFFFF);
  ASSERT_OK(c10c_dispatch_key_set_backend_from_autograd(&s, DK(CPU)));
  ASSERT_TRUE(c10c_dispatch_key_set_is_empty(s));
  ASSERT_EQ(c10c_dispatch_key_autograd_from_backend(C10C_BACKEND_COMPONENT_HIP),
            DK(AUTOGRAD_OTHER));
  ASSERT_EQ(c10c_dispatch_key_autograd_from_backend(C10C_BACKEND_COMPONENT_MTIA),
            DK(AUTOGRAD_MTIA));
  ASSERT_EQ(c10c_dispatch_key_autograd_from_backend(0), DK(AUTOGRAD_OTHER));
  ASSERT_TRUE(c10c_dispatch_key_set_is_empty(
      c10c_dispatch_key_set_autocast_related(C10C_BACKEND_COMPONENT_META)));
  ASSERT_EQ_U64(c10c_dispatch_key_set_autograd_related(C10C_BACKEND_COMPONENT_VE).repr,
                SET(DK(AD_INPLACE_OR_VIEW), DK(AUTOGRAD_OTHER)).repr);
  ASSERT_EQ(c10c_backend_component_from_device_type(C10C_DEVICE_TYPE_MAIA), 0);
  ASSERT_EQ(c10c_backend_component_from_device_type(C10C_DEVICE_TYPE_PRIVATEUSE1),
            C10C_BACKEND_COMPONENT_PRIVATE_USE1);
  ASSERT_EQ(c10c_dispatch_key_for_backend(DK(SPARSE), 0), DK(START_OF_SPARSE_BACKENDS));
  ASSERT_EQ(c10c_dispatch_key_for_backend(DK(FPGA), 1), DK(UNDEFINED));
  ASSERT_EQ(c10c_dispatch_key_for_backend(DK(DENSE), 17), DK(UNDEFINED));
  ASSERT_TRUE(c10c_dispatch_key_is_backend(DK(SPARSE_CUDA)));
  ASSERT_FALSE(c10c_dispatch_key_is_backend(DK(NESTED_TENSOR)));
  ASSERT_FALSE(c10c_dispatch_key_is_backend(DK(AUTOGRAD_CPU)));
}

TEST(new_tensor_key_sets) {
  c10c_dispatch_key_set s;
  ASSERT_OK(c10c_dispatch_key_set_for_tensor(&s, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                             C10C_DEVICE_TYPE_CPU, false));
  ASSERT_EQ_U64(s.repr, UINT64_C(0x9400010001));
  ASSERT_OK(c10c_dispatch_key_set_for_tensor(&s, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                             C10C_DEVICE_TYPE_CPU, true));
  EXPECT_KEYS(s, DK(CPU), DK(AUTOCAST_CPU));
  ASSERT_OK(c10c_dispatch_key_set_for_tensor(&s, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                             C10C_DEVICE_TYPE_META, false));
  EXPECT_KEYS(s, DK(META), DK(AD_INPLACE_OR_VIEW), DK(AUTOGRAD_META));
  ASSERT_OK(c10c_dispatch_key_set_for_tensor(&s, C10C_DTYPE_QINT8, C10C_LAYOUT_STRIDED,
                                             C10C_DEVICE_TYPE_CPU, false));
  EXPECT_KEYS(s, DK(QUANTIZED_CPU), DK(AD_INPLACE_OR_VIEW), DK(AUTOGRAD_CPU), DK(AUTOCAST_CPU));
  ASSERT_OK(c10c_dispatch_key_set_for_tensor(&s, C10C_DTYPE_FLOAT32, C10C_LAYOUT_MKLDNN,
                                             C10C_DEVICE_TYPE_CPU, false));
  EXPECT_KEYS(s, DK(MKLDNN_CPU), DK(AD_INPLACE_OR_VIEW), DK(AUTOGRAD_OTHER));
}

TEST(compute_dispatch_key_errors) {
  c10c_dispatch_key k;
  ASSERT_STATUS(
      C10C_STATUS_NOT_IMPLEMENTED,
      c10c_dispatch_key_compute(&k, C10C_DTYPE_FLOAT32, C10C_LAYOUT_SPARSE, C10C_DEVICE_TYPE_FPGA));
  ASSERT_ERROR_MESSAGE("Unsupported device type for sparse layout: FPGA");
  ASSERT_STATUS(
      C10C_STATUS_NOT_IMPLEMENTED,
      c10c_dispatch_key_compute(&k, C10C_DTYPE_FLOAT32, C10C_LAYOUT_MKLDNN, C10C_DEVICE_TYPE_CUDA));
  ASSERT_ERROR_MESSAGE("Unsupported device type for mkldnn layout: CUDA");
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_dispatch_key_compute(&k, C10C_DTYPE_FLOAT32, C10C_LAYOUT_SPARSE_BSC,
                                          C10C_DEVICE_TYPE_VULKAN));
  ASSERT_ERROR_MESSAGE("Unsupported device type for SparseBsc layout: VULKAN");
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_dispatch_key_compute(&k, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                          C10C_DEVICE_TYPE_OPENGL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_compute(&k, 47, 0, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_compute(&k, 6, 8, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_compute(&k, 6, 0, 21));
  ASSERT_OK(c10c_dispatch_key_compute(&k, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                      C10C_DEVICE_TYPE_MAIA));
  ASSERT_EQ(k, DK(MAIA));
  ASSERT_OK(c10c_dispatch_key_compute(&k, C10C_DTYPE_FLOAT32, C10C_LAYOUT_SPARSE_CSC,
                                      C10C_DEVICE_TYPE_CUDA));
  ASSERT_EQ(k, DK(SPARSE_CSR_CUDA));
  /* a new tensor's key set fails as its key does */
  c10c_dispatch_key_set ks;
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_dispatch_key_set_for_tensor(&ks, C10C_DTYPE_FLOAT32, C10C_LAYOUT_SPARSE,
                                                 C10C_DEVICE_TYPE_FPGA, false));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_dispatch_key_set_for_tensor(&ks, 6, 0, 21, true));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dispatch_key_set_from_backend(&ks, 17));
  ASSERT_ERROR_MESSAGE("invalid backend component 17");
}

TEST(predicates_and_raw_sets) {
  ASSERT_TRUE(c10c_dispatch_key_is_valid(0));
  ASSERT_TRUE(c10c_dispatch_key_is_valid(155));
  ASSERT_FALSE(c10c_dispatch_key_is_valid(156));
  ASSERT_TRUE(c10c_dispatch_key_is_alias(DK(AUTOGRAD)));
  ASSERT_TRUE(c10c_dispatch_key_is_alias(DK(COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL)));
  ASSERT_FALSE(c10c_dispatch_key_is_alias(DK(AUTOGRAD_META)));
  ASSERT_FALSE(c10c_dispatch_key_is_alias(156));
  c10c_dispatch_key_set raw = c10c_dispatch_key_set_from_raw(UINT64_C(0xC000000000000000));
  ASSERT_EQ_U64(raw.repr, UINT64_C(0xC000000000000000)); /* any word is accepted, as c10 */
  c10c_dispatch_key_set cpu = SET(DK(CPU), DK(AUTOGRAD_CPU));
  ASSERT_TRUE(c10c_dispatch_key_set_has_all(cpu, SET(DK(CPU))));
  ASSERT_FALSE(c10c_dispatch_key_set_has_all(cpu, SET(DK(CUDA))));
  ASSERT_TRUE(c10c_dispatch_key_set_has_any(cpu, SET(DK(CUDA)))); /* shares the Dense bit */
  ASSERT_FALSE(c10c_dispatch_key_set_has_any(cpu, SET(DK(FPGA))));
  ASSERT_TRUE(c10c_dispatch_key_set_has_backend(cpu, C10C_BACKEND_COMPONENT_CPU));
  ASSERT_FALSE(c10c_dispatch_key_set_has_backend(cpu, C10C_BACKEND_COMPONENT_CUDA));
  ASSERT_FALSE(c10c_dispatch_key_set_has_backend(cpu, C10C_BACKEND_COMPONENT_INVALID));
  ASSERT_FALSE(c10c_dispatch_key_set_has_backend(cpu, 40));
  /* the functionality bits both have (Dense, AutogradFunctionality), no backend bit */
  ASSERT_EQ_U64(c10c_dispatch_key_set_intersection(cpu, SET(DK(CUDA), DK(AUTOGRAD_CUDA))).repr,
                UINT64_C(0x1000010000));
}

RUN_TESTS(T(predicates_and_raw_sets), T(key_values_match_c10), T(singletons_have_c10_raw_words),
          T(building_block_plus_backend_equals_runtime_key),
          T(per_backend_keys_form_a_cross_product), T(remove_clears_functionality_bits_only),
          T(every_functionality_key_adds_has_and_removes),
          T(every_per_backend_runtime_key_is_functionality_plus_backend),
          T(full_set_iterates_every_runtime_key), T(iteration_order_is_c10s), T(priority_queries),
          T(dispatch_table_indices), T(bits_62_and_63_name_no_key), T(names_and_parsing),
          T(functionality_names_are_unique), T(to_string_prints_in_iteration_order),
          T(invalid_keys_are_errors), T(undefined_and_alias_keys_are_vacuously_contained),
          T(alias_sets_match_c10), T(alias_membership_matrix), T(backend_and_autograd_relations),
          T(new_tensor_key_sets), T(compute_dispatch_key_errors))
