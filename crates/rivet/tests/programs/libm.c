// libm through -lm.
// ldflags: -lm
#include <math.h>
#include <stdio.h>
int main(int argc, char **argv) {
    (void)argv;
    double x = argc + 0.5;
    printf("%.6f %.6f %.6f %.6f\n", sin(x), cos(x), sqrt(x * 10), pow(x, 3.5));
    return 0;
}
