/* Slurm topology.conf (tree plugin) → switch tree with node leaves and pods. */
#include "fleetprint/topology.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fleetprint/hostlist.h"

/* ---- a string → index map (open addressing) ------------------------------------ */

typedef struct strmap {
    const char **key; /* not owned */
    int *val;
    size_t cap, n;    /* cap is a power of two */
} strmap;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void map_free(strmap *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

static int map_get(const strmap *m, const char *k)
{
    if (!m->cap)
        return -1;
    for (size_t i = hash_str(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->key[i])
            return -1;
        if (strcmp(m->key[i], k) == 0)
            return m->val[i];
    }
}

static bool map_put(strmap *m, const char *k, int v);

static bool map_grow(strmap *m)
{
    strmap bigger = {0};
    bigger.cap = m->cap ? m->cap * 2 : 64;
    bigger.key = calloc(bigger.cap, sizeof *bigger.key);
    bigger.val = calloc(bigger.cap, sizeof *bigger.val);
    if (!bigger.key || !bigger.val) {
        map_free(&bigger);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i])
            map_put(&bigger, m->key[i], m->val[i]);
    map_free(m);
    *m = bigger;
    return true;
}

/* Insert or overwrite. False when out of memory. */
static bool map_put(strmap *m, const char *k, int v)
{
    if ((m->n + 1) * 2 > m->cap && !map_grow(m))
        return false;
    size_t i = hash_str(k) & (m->cap - 1);
    while (m->key[i] && strcmp(m->key[i], k) != 0)
        i = (i + 1) & (m->cap - 1);
    if (!m->key[i])
        m->n++;
    m->key[i] = k;
    m->val[i] = v;
    return true;
}

/* ---- the model ------------------------------------------------------------------ */

typedef struct tswitch {
    char *name;
    char *link_speed;
    int line;
    int level;
    int parent;
    int parent_line;      /* line of the parent's definition, for messages */
    fp_hostlist *children; /* Switches= names, NULL when absent */
    bool has_nodes;
} tswitch;

typedef struct tnode {
    char *name;
    int leaf;
} tnode;

struct fp_topology {
    tswitch *sw;
    int nsw, capsw;
    tnode *node;
    int nnode, capnode;
    strmap sw_by_name, node_by_name;
    int levels;
};

void fp_topology_free(fp_topology *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nsw; i++) {
        free(t->sw[i].name);
        free(t->sw[i].link_speed);
        fp_hostlist_free(t->sw[i].children);
    }
    for (int i = 0; i < t->nnode; i++)
        free(t->node[i].name);
    free(t->sw);
    free(t->node);
    map_free(&t->sw_by_name);
    map_free(&t->node_by_name);
    free(t);
}

int fp_topology_nodes(const fp_topology *t)
{
    return t->nnode;
}

const char *fp_topology_node_name(const fp_topology *t, int node)
{
    return node >= 0 && node < t->nnode ? t->node[node].name : NULL;
}

int fp_topology_node_find(const fp_topology *t, const char *name)
{
    return map_get(&t->node_by_name, name);
}

int fp_topology_node_leaf(const fp_topology *t, int node)
{
    return node >= 0 && node < t->nnode ? t->node[node].leaf : -1;
}

int fp_topology_node_pod(const fp_topology *t, int node)
{
    int leaf = fp_topology_node_leaf(t, node);
    if (leaf < 0)
        return -1;
    return t->sw[leaf].parent >= 0 ? t->sw[leaf].parent : leaf;
}

int fp_topology_switches(const fp_topology *t)
{
    return t->nsw;
}

const char *fp_topology_switch_name(const fp_topology *t, int sw)
{
    return sw >= 0 && sw < t->nsw ? t->sw[sw].name : NULL;
}

int fp_topology_switch_level(const fp_topology *t, int sw)
{
    return sw >= 0 && sw < t->nsw ? t->sw[sw].level : -1;
}

int fp_topology_switch_parent(const fp_topology *t, int sw)
{
    return sw >= 0 && sw < t->nsw ? t->sw[sw].parent : -1;
}

const char *fp_topology_switch_link_speed(const fp_topology *t, int sw)
{
    return sw >= 0 && sw < t->nsw ? t->sw[sw].link_speed : NULL;
}

int fp_topology_switch_line(const fp_topology *t, int sw)
{
    return sw >= 0 && sw < t->nsw ? t->sw[sw].line : -1;
}

int fp_topology_levels(const fp_topology *t)
{
    return t->levels;
}

/* ---- parsing -------------------------------------------------------------------- */

typedef struct pctx {
    const char *file;
    char *err;
    size_t errlen;
} pctx;

__attribute__((format(printf, 3, 4))) static fp_status lerr(pctx *c, int line, const char *fmt,
                                                            ...)
{
    if (c->err && c->errlen) {
        int n = snprintf(c->err, c->errlen, "%s:%d: ", c->file, line);
        if (n >= 0 && (size_t)n < c->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return FP_EINPUT;
}

static fp_status oom(pctx *c)
{
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s: out of memory", c->file);
    return FP_ENOMEM;
}

static int add_switch(fp_topology *t)
{
    if (t->nsw == t->capsw) {
        int cap = t->capsw ? t->capsw * 2 : 16;
        tswitch *p = realloc(t->sw, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        t->sw = p;
        t->capsw = cap;
    }
    memset(&t->sw[t->nsw], 0, sizeof t->sw[t->nsw]);
    t->sw[t->nsw].parent = -1;
    return t->nsw++;
}

static int add_node(fp_topology *t)
{
    if (t->nnode == t->capnode) {
        int cap = t->capnode ? t->capnode * 2 : 64;
        tnode *p = realloc(t->node, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        t->node = p;
        t->capnode = cap;
    }
    memset(&t->node[t->nnode], 0, sizeof t->node[t->nnode]);
    return t->nnode++;
}

/* One logical line (comments stripped, continuations joined), in place. */
static fp_status parse_line(fp_topology *t, pctx *c, char *text, int line)
{
    fp_status st = FP_OK;
    const char *swname = NULL, *nodes = NULL, *switches = NULL, *speed = NULL;
    fp_hostlist *nl = NULL, *cl = NULL;
    char herr[200];
    char *save = NULL;
    for (char *tok = strtok_r(text, " \t\r\f\v", &save); tok;
         tok = strtok_r(NULL, " \t\r\f\v", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return lerr(c, line, "expected Key=Value, found '%s'", tok);
        *eq = 0;
        const char *val = eq + 1;
        const char **slot = NULL;
        if (strcasecmp(tok, "SwitchName") == 0)
            slot = &swname;
        else if (strcasecmp(tok, "Nodes") == 0)
            slot = &nodes;
        else if (strcasecmp(tok, "Switches") == 0)
            slot = &switches;
        else if (strcasecmp(tok, "LinkSpeed") == 0)
            slot = &speed;
        else
            return lerr(c, line, "unknown key '%s' (expected SwitchName, Switches, Nodes or LinkSpeed)",
                        tok);
        if (*slot)
            return lerr(c, line, "%s= given twice", tok);
        if (!*val)
            return lerr(c, line, "%s= has no value", tok);
        *slot = val;
    }
    if (!swname && !nodes && !switches && !speed)
        return FP_OK; /* blank */
    if (!swname)
        return lerr(c, line, "missing SwitchName=");
    for (const char *p = swname; *p; p++)
        if (*p == '[' || *p == ']' || *p == ',')
            return lerr(c, line, "SwitchName=%s must be a single name", swname);
    int dup = map_get(&t->sw_by_name, swname);
    if (dup >= 0)
        return lerr(c, line, "duplicate switch '%s' (first defined on line %d)", swname,
                    t->sw[dup].line);
    if (nodes && switches)
        return lerr(c, line, "switch '%s' has both Nodes= and Switches=", swname);
    if (nodes && fp_hostlist_parse(nodes, &nl, herr, sizeof herr) != FP_OK) {
        st = lerr(c, line, "Nodes=%s: %s", nodes, herr);
        goto cleanup;
    }
    if (switches && fp_hostlist_parse(switches, &cl, herr, sizeof herr) != FP_OK) {
        st = lerr(c, line, "Switches=%s: %s", switches, herr);
        goto cleanup;
    }
    int s = add_switch(t);
    if (s < 0) {
        st = oom(c);
        goto cleanup;
    }
    tswitch *w = &t->sw[s];
    w->line = line;
    w->name = strdup(swname);
    w->link_speed = strdup(speed ? speed : "");
    if (!w->name || !w->link_speed || !map_put(&t->sw_by_name, w->name, s)) {
        st = oom(c);
        goto cleanup;
    }
    w->has_nodes = nodes != NULL;
    w->children = cl;
    cl = NULL;
    for (size_t i = 0; nl && i < fp_hostlist_count(nl); i++) {
        const char *nm = fp_hostlist_get(nl, i);
        int prev = map_get(&t->node_by_name, nm);
        if (prev >= 0) {
            const tswitch *o = &t->sw[t->node[prev].leaf];
            if (o == &t->sw[s])
                st = lerr(c, line, "node '%s' listed twice under switch '%s'", nm, swname);
            else
                st = lerr(c, line, "node '%s' is already under leaf switch '%s' (line %d)", nm,
                          o->name, o->line);
            goto cleanup;
        }
        int n = add_node(t);
        if (n < 0 || !(t->node[n].name = strdup(nm)) ||
            !map_put(&t->node_by_name, t->node[n].name, n)) {
            st = oom(c);
            goto cleanup;
        }
        t->node[n].leaf = s;
    }
cleanup:
    fp_hostlist_free(nl);
    fp_hostlist_free(cl);
    return st;
}

/* Link children to parents, reject cycles, compute levels. */
static fp_status build_tree(fp_topology *t, pctx *c)
{
    for (int s = 0; s < t->nsw; s++) {
        const fp_hostlist *ch = t->sw[s].children;
        for (size_t i = 0; ch && i < fp_hostlist_count(ch); i++) {
            const char *nm = fp_hostlist_get(ch, i);
            int k = map_get(&t->sw_by_name, nm);
            if (k < 0)
                return lerr(c, t->sw[s].line, "switch '%s' lists unknown switch '%s'",
                            t->sw[s].name, nm);
            if (k == s)
                return lerr(c, t->sw[s].line, "switch '%s' lists itself: a cycle", nm);
            if (t->sw[k].parent == s)
                return lerr(c, t->sw[s].line, "switch '%s' lists '%s' twice", t->sw[s].name, nm);
            if (t->sw[k].parent >= 0)
                return lerr(c, t->sw[s].line,
                            "switch '%s' is already under switch '%s' (line %d); a tree "
                            "needs one parent",
                            nm, t->sw[t->sw[k].parent].name, t->sw[k].parent_line);
            t->sw[k].parent = s;
            t->sw[k].parent_line = t->sw[s].line;
        }
    }
    /* with one parent each, a cycle is a walk up that comes back */
    int *seen = calloc((size_t)t->nsw + 1, sizeof *seen);
    if (!seen)
        return oom(c);
    fp_status st = FP_OK;
    for (int s = 0; s < t->nsw && st == FP_OK; s++) {
        if (seen[s])
            continue;
        int x = s;
        while (x >= 0 && !seen[x]) {
            seen[x] = s + 1;
            x = t->sw[x].parent;
        }
        if (x >= 0 && seen[x] == s + 1) {
            /* x is on a cycle; name it from the line that lists x */
            char path[512];
            size_t n = (size_t)snprintf(path, sizeof path, "%s", t->sw[x].name);
            for (int y = t->sw[x].parent; n < sizeof path; y = t->sw[y].parent) {
                n += (size_t)snprintf(path + n, sizeof path - n, " <- %s", t->sw[y].name);
                if (y == x)
                    break;
            }
            st = lerr(c, t->sw[x].parent_line, "switches form a cycle (each one listed by the next): %s", path);
        }
    }
    free(seen);
    if (st != FP_OK)
        return st;
    /* levels: a switch is one above its highest child */
    t->levels = t->nsw ? 1 : 0;
    for (int s = 0; s < t->nsw; s++) {
        if (t->sw[s].children && fp_hostlist_count(t->sw[s].children))
            continue; /* only start from leaves */
        int lvl = 0;
        for (int p = t->sw[s].parent; p >= 0; p = t->sw[p].parent) {
            lvl++;
            if (t->sw[p].level >= lvl)
                break;
            t->sw[p].level = lvl;
            if (lvl + 1 > t->levels)
                t->levels = lvl + 1;
        }
    }
    return FP_OK;
}

fp_status fp_topology_parse(const char *text, const char *name, fp_topology **out, char *err,
                            size_t errlen)
{
    pctx c = {.file = name ? name : "topology.conf", .err = err, .errlen = errlen};
    fp_status st = FP_OK;
    char *buf = NULL;
    *out = NULL;
    if (err && errlen)
        err[0] = 0;
    fp_topology *t = calloc(1, sizeof *t);
    buf = malloc(strlen(text) + 2);
    if (!t || !buf) {
        st = oom(&c);
        goto cleanup;
    }
    int line = 1;
    const char *p = text;
    while (*p) {
        /* gather one logical line: physical lines joined by a trailing '\' */
        int first = line;
        size_t n = 0;
        for (;;) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            const char *hash = memchr(p, '#', len);
            size_t keep = hash ? (size_t)(hash - p) : len;
            while (keep > 0 && isspace((unsigned char)p[keep - 1]))
                keep--;
            bool cont = !hash && keep > 0 && p[keep - 1] == '\\';
            if (cont)
                keep--;
            memcpy(buf + n, p, keep);
            n += keep;
            buf[n++] = ' ';
            p = e ? e + 1 : p + len;
            line++;
            if (!cont || !*p)
                break;
        }
        buf[n] = 0;
        st = parse_line(t, &c, buf, first);
        if (st != FP_OK)
            goto cleanup;
    }
    st = build_tree(t, &c);
cleanup:
    free(buf);
    if (st != FP_OK) {
        fp_topology_free(t);
        return st;
    }
    *out = t;
    return FP_OK;
}

fp_status fp_topology_load(const char *path, fp_topology **out, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return FP_EINPUT;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    fp_status st = FP_OK;
    while (text) {
        n += fread(text + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        cap *= 2;
        char *p = realloc(text, cap);
        if (!p) {
            free(text);
            text = NULL;
        } else {
            text = p;
        }
    }
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        st = FP_ENOMEM;
    } else if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        st = FP_EINPUT;
    } else {
        text[n] = 0;
        if (strlen(text) != n) {
            snprintf(err, errlen, "%s: not a text file (NUL byte)", path);
            st = FP_EINPUT;
        } else {
            st = fp_topology_parse(text, path, out, err, errlen);
        }
    }
    free(text);
    fclose(f);
    return st;
}
