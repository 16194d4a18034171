/* gen_tiny.c — eph-report-gen OUT VARIANT: writes a tiny test profile. */
#include <stdio.h>
#include <stdlib.h>

#include "tiny.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: eph-report-gen OUT VARIANT\n");
    return 2;
  }
  return tiny_write(argv[1], atoi(argv[2]));
}
