/* Layouts and memory formats: c10's values and names, torch's Python names. */
#include "harness.h"

TEST(layout_values_and_names) {
  ASSERT_EQ(C10C_LAYOUT_COUNT, 8);
  ASSERT_EQ(C10C_LAYOUT_JAGGED, 7);
  ASSERT_STR_EQ(c10c_layout_name(C10C_LAYOUT_SPARSE_CSR), "SparseCsr");
  ASSERT_STR_EQ(c10c_layout_python_name(C10C_LAYOUT_SPARSE), "sparse_coo");
  ASSERT_STR_EQ(c10c_layout_python_name(C10C_LAYOUT_MKLDNN), "_mkldnn");
  ASSERT_TRUE(c10c_layout_is_valid(0));
  ASSERT_FALSE(c10c_layout_is_valid(8));
  ASSERT_FALSE(c10c_layout_is_valid(-1));
}

TEST(invalid_layout_names_are_errors) {
  ASSERT_TRUE(c10c_layout_name(8) == NULL);
  ASSERT_EQ(c10c_last_error_status(), C10C_STATUS_INVALID_ARGUMENT);
  ASSERT_ERROR_MESSAGE("Unknown layout 8");
  ASSERT_TRUE(c10c_layout_python_name(-1) == NULL);
}

TEST(memory_format_values_and_names) {
  ASSERT_EQ(C10C_MEMORY_FORMAT_CHANNELS_LAST_3D, 3);
  ASSERT_STR_EQ(c10c_memory_format_name(C10C_MEMORY_FORMAT_CHANNELS_LAST_3D), "ChannelsLast3d");
  ASSERT_STR_EQ(c10c_memory_format_python_name(C10C_MEMORY_FORMAT_PRESERVE), "preserve_format");
  ASSERT_TRUE(c10c_memory_format_is_valid(3));
  ASSERT_FALSE(c10c_memory_format_is_valid(4));
}

TEST(invalid_memory_format_names_are_errors) {
  ASSERT_TRUE(c10c_memory_format_name(4) == NULL);
  ASSERT_ERROR_MESSAGE("Unknown memory format 4");
  ASSERT_TRUE(c10c_memory_format_python_name(-2) == NULL);
  ASSERT_EQ(c10c_last_error_status(), C10C_STATUS_INVALID_ARGUMENT);
}

RUN_TESTS(T(layout_values_and_names), T(invalid_layout_names_are_errors),
          T(memory_format_values_and_names), T(invalid_memory_format_names_are_errors))
