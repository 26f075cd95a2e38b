/* app/ alone: linked with fp_app and what it uses (every layer). Its command
 * table holds every command of the README. */
#include "check.h"
#include "cli.h"

int main(void)
{
    static const char *const names[] = {"run", "preflight", "burnin", "baseline", "detect",
                                         "whatif", "trace", "admit", "report", "store",
                                         "simulate", "version", NULL};
    for (int i = 0; names[i]; i++)
        CHECK(fp_command_find(names[i]) != NULL);
    CHECK(fp_command_find("no-such-command") == NULL);
    CHECK_DONE();
}
