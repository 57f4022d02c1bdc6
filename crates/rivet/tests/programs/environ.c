// argv, environ and stdin.
// args: first "second arg" third
// stdin: line one\nline two\n
#include <stdio.h>
#include <string.h>
extern char **environ;
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) printf("argv[%d]=%s\n", i, argv[i]);
    int have_path = 0;
    for (char **e = environ; *e; e++) have_path |= strncmp(*e, "PATH=", 5) == 0;
    printf("PATH set: %d\n", have_path);
    char line[100];
    while (fgets(line, sizeof line, stdin)) printf("read: %s", line);
    return 0;
}
