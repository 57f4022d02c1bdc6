// Compressed debug sections in the inputs: zstd (SHF_COMPRESSED, from the assembler; gcc 12 has no
// -gz=zstd); gz_zlib.c covers zlib. The output's debug info is plain and addr2line maps main to its
// line.
// cflags: -g -O0 -Wa,--compress-debug-sections=zstd
// check: addr2line main main.c:8
#include <stdio.h>
int square(int x) { return x * x; }
int main(void) {
    printf("%d\n", square(7));
    return 0;
}
