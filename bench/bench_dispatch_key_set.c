#include "c10c/c10c.h"
int main(void) { return 0; }
