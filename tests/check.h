#ifndef FLEETPRINT_TESTS_CHECK_H
#define FLEETPRINT_TESTS_CHECK_H
/* A minimal assertion harness for fleetprint's test executables: each CHECK
 * that fails prints its expression and location; main returns the count. */
#include <math.h>
#include <stdio.h>

static int check_failures;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
            check_failures++;                                                              \
        }                                                                                  \
    } while (0)

#define CHECK_NEAR(a, b, rel)                                                              \
    do {                                                                                   \
        double check_a = (a), check_b = (b);                                               \
        if (!(fabs(check_a - check_b) <= (rel) * fabs(check_b))) {                         \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g\n", __FILE__,  \
                    __LINE__, #a, check_a, #b, check_b);                                   \
            check_failures++;                                                              \
        }                                                                                  \
    } while (0)

#define CHECK_DONE()                                                                       \
    do {                                                                                   \
        if (check_failures)                                                                \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                       \
        return check_failures ? 1 : 0;                                                     \
    } while (0)

#endif
