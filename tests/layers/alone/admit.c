/* admit/ alone: linked with fp_admit and what it uses (fingerprint, core). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/hostlist.h"

int main(void)
{
    fp_hostlist *hl = NULL;
    char err[128];
    CHECK(fp_hostlist_parse("n[001-004,007]", &hl, err, sizeof err) == FP_OK);
    CHECK(hl && fp_hostlist_count(hl) == 5 && strcmp(fp_hostlist_get(hl, 4), "n007") == 0);
    char *back = hl ? fp_hostlist_format(hl) : NULL;
    CHECK(back && strcmp(back, "n[001-004,007]") == 0);
    free(back);
    fp_hostlist_free(hl);
    CHECK(fp_hostlist_parse("n[3-1]", &hl, err, sizeof err) != FP_OK);
    CHECK_DONE();
}
