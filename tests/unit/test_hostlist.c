/* Hostlist expressions: Slurm's expansion rules, errors with positions, and
 * compress/expand round trips. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/hostlist.h"

/* Expand expr and compare with the space-separated names in want. */
static int expands_to(const char *expr, const char *want)
{
    fp_hostlist *hl;
    char err[256];
    if (fp_hostlist_parse(expr, &hl, err, sizeof err) != FP_OK) {
        fprintf(stderr, "'%s': unexpected error: %s\n", expr, err);
        return 0;
    }
    char buf[4096] = "";
    for (size_t i = 0; i < fp_hostlist_count(hl); i++) {
        if (i)
            strcat(buf, " ");
        strcat(buf, fp_hostlist_get(hl, i));
    }
    fp_hostlist_free(hl);
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "'%s' expanded to '%s', want '%s'\n", expr, buf, want);
        return 0;
    }
    return 1;
}

/* expr must fail with a message containing "position <pos>:" and what. */
static int fails_at(const char *expr, int pos, const char *what)
{
    fp_hostlist *hl;
    char err[256], tag[32];
    if (fp_hostlist_parse(expr, &hl, err, sizeof err) != FP_EINPUT || hl != NULL) {
        fprintf(stderr, "'%s' was accepted\n", expr);
        fp_hostlist_free(hl);
        return 0;
    }
    snprintf(tag, sizeof tag, "position %d:", pos);
    if (!strstr(err, tag) || !strstr(err, what) || strchr(err, '\n')) {
        fprintf(stderr, "'%s': error '%s' lacks '%s' / '%s'\n", expr, err, tag, what);
        return 0;
    }
    return 1;
}

/* compress(expand(expr)) == expr for an expression already in canonical form. */
static int round_trips(const char *expr)
{
    fp_hostlist *hl;
    char err[256];
    if (fp_hostlist_parse(expr, &hl, err, sizeof err) != FP_OK)
        return 0;
    char *s = fp_hostlist_format(hl);
    int ok = s && strcmp(s, expr) == 0;
    if (!ok)
        fprintf(stderr, "'%s' compressed back to '%s'\n", expr, s ? s : "(null)");
    free(s);
    fp_hostlist_free(hl);
    return ok;
}

static unsigned rnd(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

int main(void)
{
    /* ranges, lists, single hosts */
    CHECK(expands_to("n[1-3]", "n1 n2 n3"));
    CHECK(expands_to("n[1-2,5,7-8]", "n1 n2 n5 n7 n8"));
    CHECK(expands_to("n7", "n7"));
    CHECK(expands_to("n[7]", "n7"));
    CHECK(expands_to("login", "login"));
    /* leading zeros fix the width; without them the width is natural */
    CHECK(expands_to("n[01-03]", "n01 n02 n03"));
    CHECK(expands_to("n[8-10]", "n8 n9 n10"));
    CHECK(expands_to("n[08-10]", "n08 n09 n10"));
    CHECK(expands_to("n[098-101]", "n098 n099 n100 n101"));
    CHECK(expands_to("n[001-002,5]", "n001 n002 n5"));
    CHECK(expands_to("n[0-1]", "n0 n1"));
    /* separators: commas, whitespace, repeated; duplicates and order kept */
    CHECK(expands_to("a1,b2  c3\td4,,e5 ,", "a1 b2 c3 d4 e5"));
    CHECK(expands_to("n3,n1,n1", "n3 n1 n1"));
    CHECK(expands_to("", ""));
    CHECK(expands_to(" , ", ""));
    /* several bracket groups: a product, leftmost slowest; text after brackets */
    CHECK(expands_to("r[1-2]n[1-3]", "r1n1 r1n2 r1n3 r2n1 r2n2 r2n3"));
    CHECK(expands_to("r[1-2]-n[01-02]-ib", "r1-n01-ib r1-n02-ib r2-n01-ib r2-n02-ib"));
    CHECK(expands_to("gpu[1-2]-ib,cpu[3]", "gpu1-ib gpu2-ib cpu3"));
    CHECK(expands_to("[1-3]", "1 2 3"));
    CHECK(expands_to("x[1-2][5,7]", "x15 x17 x25 x27"));
    CHECK(expands_to("rack-1.n[1-2]", "rack-1.n1 rack-1.n2"));

    /* errors name the 1-based position */
    CHECK(fails_at("n[3-1]", 3, "backwards"));
    CHECK(fails_at("n[1-2", 2, "never closed"));
    CHECK(fails_at("a,n[1-2,", 4, "never closed"));
    CHECK(fails_at("n1]", 3, "without a matching"));
    CHECK(fails_at("n[1-[2]]", 5, "cannot nest"));
    CHECK(fails_at("n[]", 2, "empty brackets"));
    CHECK(fails_at("n[1-]", 5, "expected a number"));
    CHECK(fails_at("n[-1]", 3, "expected a number"));
    CHECK(fails_at("n[a]", 3, "expected a number"));
    CHECK(fails_at("n[1,,2]", 5, "expected a number"));
    CHECK(fails_at("n[1x]", 4, "unexpected 'x'"));
    CHECK(fails_at("n[1, 2]", 5, "whitespace inside brackets"));
    CHECK(fails_at("n[0-99999999]", 1, "more than"));
    CHECK(fails_at("a[1-5000]b[1-5000]", 1, "more than"));
    CHECK(fails_at("n[1234567890123456789]", 3, "longer than"));

    /* a failed append leaves the list as it was */
    fp_hostlist *hl = fp_hostlist_new();
    char err[256];
    CHECK(fp_hostlist_append(hl, "a[1-3]", err, sizeof err) == FP_OK);
    CHECK(fp_hostlist_append(hl, "b[1-3],c[2-1]", err, sizeof err) == FP_EINPUT);
    CHECK(fp_hostlist_count(hl) == 3 && strstr(err, "position 10:"));
    CHECK(fp_hostlist_push(hl, "ok-1") == FP_OK && fp_hostlist_count(hl) == 4);
    CHECK(fp_hostlist_push(hl, "bad,name") == FP_EINPUT && fp_hostlist_push(hl, "") == FP_EINPUT);
    CHECK(fp_hostlist_contains(hl, "a2") && !fp_hostlist_contains(hl, "a4"));
    fp_hostlist_free(hl);

    /* compression keeps order and Slurm's width rules */
    CHECK(round_trips("n[1-3,7],m5"));
    CHECK(round_trips("n[08-10]"));
    CHECK(round_trips("n[8-10]"));
    CHECK(round_trips("n[098-101]"));
    CHECK(round_trips("n[3,1-2]"));
    CHECK(round_trips("n[01-02,5]"));
    CHECK(round_trips("n[9,010]"));
    CHECK(round_trips("gpu[1-4]-ib,login,n0"));
    CHECK(round_trips("n1,m1,n2"));
    CHECK(round_trips("n[1,1]"));
    CHECK(round_trips(""));
    const char *names[] = {"n1", "n2", "n3", "n10", "n11", "x", "n12"};
    char *c = fp_hostlist_compress(names, 7);
    CHECK(c && strcmp(c, "n[1-3,10-11],x,n12") == 0);
    free(c);
    /* product expressions come back in flat form and expand the same */
    CHECK(expands_to("r1n[1-2],r2n[1-2]", "r1n1 r1n2 r2n1 r2n2"));
    fp_hostlist *p;
    CHECK(fp_hostlist_parse("r[1-2]n[1-2]", &p, err, sizeof err) == FP_OK);
    c = fp_hostlist_format(p);
    CHECK(c && strcmp(c, "r1n[1-2],r2n[1-2]") == 0);
    free(c);
    fp_hostlist_free(p);

    /* random lists: expand(compress(names)) gives back the same names in order */
    unsigned seed = 12345;
    for (int trial = 0; trial < 300; trial++) {
        int n = 1 + (int)(rnd(&seed) % 60);
        char **v = calloc((size_t)n, sizeof *v);
        static const char *const pre[] = {"n", "gpu", "r1-n", "", "a.b"};
        static const char *const suf[] = {"", "", "-ib", "x"};
        int base = (int)(rnd(&seed) % 200);
        for (int i = 0; i < n; i++) {
            v[i] = malloc(48);
            int num = (rnd(&seed) % 4) ? base++ : (int)(rnd(&seed) % 1200);
            int width = (int)(rnd(&seed) % 5);
            const char *pf = pre[rnd(&seed) % 5];
            const char *sf = suf[rnd(&seed) % 4];
            if (!*pf && !*sf && rnd(&seed) % 2)
                pf = "h";
            if (rnd(&seed) % 17 == 0)
                snprintf(v[i], 48, "literal%c", 'a' + (int)(rnd(&seed) % 3));
            else
                snprintf(v[i], 48, "%s%0*d%s", pf, width, num, sf);
        }
        char *s = fp_hostlist_compress((const char *const *)v, (size_t)n);
        fp_hostlist *back = NULL;
        CHECK(s && fp_hostlist_parse(s, &back, err, sizeof err) == FP_OK);
        int same = back && fp_hostlist_count(back) == (size_t)n;
        for (int i = 0; same && i < n; i++)
            same = strcmp(fp_hostlist_get(back, (size_t)i), v[i]) == 0;
        if (!same)
            fprintf(stderr, "round trip failed for '%s'\n", s ? s : "(null)");
        CHECK(same);
        /* and compressing again is stable */
        char *s2 = back ? fp_hostlist_format(back) : NULL;
        CHECK(s2 && s && strcmp(s, s2) == 0);
        free(s2);
        free(s);
        fp_hostlist_free(back);
        for (int i = 0; i < n; i++)
            free(v[i]);
        free(v);
    }

    /* natural sort with duplicates removed */
    fp_hostlist *u;
    CHECK(fp_hostlist_parse("n10,n9,m1,n9,n[1-2],n01,login", &u, err, sizeof err) == FP_OK);
    fp_hostlist_sort_unique(u);
    c = fp_hostlist_format(u);
    CHECK(c && strcmp(c, "login,m1,n[1,01,2,9-10]") == 0);
    if (c && strcmp(c, "login,m1,n[1,01,2,9-10]") != 0)
        fprintf(stderr, "sorted: %s\n", c);
    free(c);
    CHECK(fp_hostlist_contains_sorted(u, "n10") && fp_hostlist_contains_sorted(u, "login"));
    CHECK(!fp_hostlist_contains_sorted(u, "n3") && !fp_hostlist_contains_sorted(u, "n010"));
    fp_hostlist_free(u);

    CHECK_DONE();
}
