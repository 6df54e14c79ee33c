// Compiles the public headers as C++11: they must be includable from C++ host applications.
#include "c10c/c10c.h"

int main() {
  c10c_device d = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  return c10c_abi_check(&info) == C10C_STATUS_OK && c10c_device_equal(d, d) ? 0 : 1;
}
