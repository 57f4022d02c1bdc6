/* Runs COMMAND and writes "wall_s user_s sys_s maxrss_kb wait_status" to RESULT_FILE.
 * bench/run.py measures every link through this helper rather than from Python: a child forked from
 * the Python interpreter carries the interpreter's RSS high-water mark (~20 MB) into ru_maxrss
 * (the kernel keeps the pre-exec maximum), which would hide the small links' real peak RSS.
 * Built by run.py with `gcc -O2 -static` into the cache directory. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s RESULT_FILE COMMAND...\n", argv[0]); return 2; }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid == 0) { execvp(argv[2], argv + 2); perror(argv[2]); _exit(127); }
    int status; struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) { perror("fork/wait4"); return 2; }
    clock_gettime(CLOCK_MONOTONIC, &b);
    FILE *f = fopen(argv[1], "w");
    if (!f) { perror(argv[1]); return 2; }
    fprintf(f, "%.9f %ld.%06ld %ld.%06ld %ld %d\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
            ru.ru_maxrss, status);
    return fclose(f) != 0;
}
