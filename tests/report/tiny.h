#ifndef EPH_TESTS_REPORT_TINY_H
#define EPH_TESTS_REPORT_TINY_H
#include "ephemera/format.h"
/* Writes tiny profile `variant` (see tiny.c) to path; 0 on success. */
int tiny_write(const char *path, int variant);
#endif
