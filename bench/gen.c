/* bench/gen.c: the generator benchmark as a program of its own (same as `idgen bench`). */
#include "cli/cli.h"

int main(int argc, char **argv) {
  return idgen__bench_gen(argc, argv);
}
