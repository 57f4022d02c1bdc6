// A thin archive (members stay in their own files) that also holds a non-ELF member, as rlibs
// hold lib.rmeta: the member is skipped, the object is used.
// prepare: printf 'rust metadata, not ELF' > lib.rmeta && ar rcsT libthin.a lib.rmeta piece.o
// link: main.o -L. -lthin
#include <stdio.h>
int piece(void);
int main(void) {
    printf("piece=%d\n", piece());
    return 0;
}
//--- piece.c
int piece(void) { return 17; }
