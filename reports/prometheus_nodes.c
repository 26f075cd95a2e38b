/* A run as one Prometheus textfile per node (--prometheus DIR/), so that each
 * node's node_exporter serves only its own series, however large the fleet:
 *   - fleetprint-<node>.prom: the node's devices' values as the single
 *     textfile has them (prometheus.c); its links' and ranks' values as
 *     min/median/max over the passing ones (fleetprint_node_<family>{stat}),
 *     plus the full series of each link or rank that does not pass (warn,
 *     fail, unknown); the verdicts of the node, its devices and its links and
 *     ranks that do not pass, with counts per state of all its links and
 *     ranks (fleetprint_node_verdicts); its drift and repeat offences; and
 *     when the run that wrote it started;
 *   - fleetprint-run.prom: the run as a whole (verdict, breaker, blind spots,
 *     confirm pass, counts of entities per kind and state) and what belongs
 *     to no node (communicator groups).
 * A link's own series and verdict go to its first endpoint's file (its
 * labels name that node's Hostname); its value counts in both endpoints'
 * summaries. Every node-file series carries Hostname="<node>" and no
 * run-file series does, so no series is in two files of one folder
 * (node_exporter drops such a series). docs/prometheus.md lists the
 * families and the series per node and per run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "prometheus_internal.h"

/* ---- who holds what ----------------------------------------------------------------- */

typedef struct render {
    const fp_run *run;
    const fp_verdicts *v;
    const char *tag;
    int nnodes;
    int *by_name;                     /* node indices sorted by name */
    const fp_entity_verdict **judged; /* the verdicts sorted by entity */
    size_t njudged;
    fp__prom_uuids uuids;
} render;

static int cmp_node_names(const void *a, const void *b, void *run)
{
    const fp_run *r = run;
    return strcmp(r->nodes[*(const int *)a], r->nodes[*(const int *)b]);
}

/* The index of node name in run->nodes, or -1. */
static int node_index(const render *r, const char *name)
{
    size_t lo = 0, hi = (size_t)r->nnodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->run->nodes[r->by_name[mid]], name);
        if (c == 0)
            return r->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int cmp_entity(const fp_entity *x, const fp_entity *y)
{
    int c = (int)x->kind - (int)y->kind;
    if (!c)
        c = strcmp(x->node, y->node);
    if (!c)
        c = x->dev - y->dev;
    if (!c && x->kind == FP_ENT_LINK)
        c = strcmp(x->peer, y->peer);
    if (!c)
        c = x->peer_dev - y->peer_dev;
    if (!c)
        c = x->rank - y->rank;
    return c;
}

static int cmp_judged(const void *a, const void *b)
{
    return cmp_entity((*(const fp_entity_verdict *const *)a)->entity,
                      (*(const fp_entity_verdict *const *)b)->entity);
}

/* The verdict of entity e, FP_UNKNOWN when it was not judged. */
static fp_verdict verdict_of(const render *r, const fp_entity *e)
{
    size_t lo = 0, hi = r->njudged;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = cmp_entity(r->judged[mid]->entity, e);
        if (c == 0)
            return r->judged[mid]->verdict;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FP_UNKNOWN;
}

/* The file that holds e's own series: its node's index, or nnodes (the run
 * file) for a group or a node the run does not list. */
static int owner(const render *r, const fp_entity *e)
{
    int i = e->kind == FP_ENT_GROUP ? -1 : node_index(r, e->node);
    return i < 0 ? r->nnodes : i;
}

/* Links and ranks are summarised when they pass; nodes and devices never. */
static bool summarised(fp_entity_kind k)
{
    return k == FP_ENT_LINK || k == FP_ENT_RANK;
}

/* A value summarised when its entity passes: a link's or a rank's, or a
 * collective's per rank, which it labels with the rank's device (time, wrong
 * elements: per collective, type, operation and size). A device's own
 * measurements (GEMM, memory, copies, launch) are always kept. */
static bool per_rank(const fp_sample *key, const fp_entity *e)
{
    return summarised(e->kind) || (e->kind == FP_ENT_GPU && strcmp(key->suite, "collectives") == 0);
}

/* ---- min/median/max of the passing links and ranks ------------------------------------ */

typedef struct contrib {
    int node;
    const fp__prom_series *s; /* family, run_tag and family label, size */
    double value;
} contrib;

static int cmp_key(const contrib *x, const contrib *y)
{
    int c = x->node - y->node;
    if (!c)
        c = strcmp(x->s->family, y->s->family);
    if (!c) {
        size_t nx = x->s->base_end, ny = y->s->base_end;
        c = strncmp(x->s->labels, y->s->labels, nx < ny ? nx : ny);
        if (!c)
            c = (nx > ny) - (nx < ny);
    }
    if (!c)
        c = (x->s->key->size > y->s->key->size) - (x->s->key->size < y->s->key->size);
    return c;
}

static int cmp_contrib(const void *a, const void *b)
{
    const contrib *x = a, *y = b;
    int c = cmp_key(x, y);
    return c ? c : (x->value > y->value) - (x->value < y->value);
}

/* Write the summaries of c[0..n) (one node's, sorted): per family, family
 * label and size, the min, lower median and max of the values; of a count of
 * wrong elements only the max (what passes counts none: the max says so). */
static void summaries(FILE *f, const render *r, const contrib *c, size_t n)
{
    static const char *const stat[] = {"min", "median", "max"};
    static const char wrong[] = "_wrong_elements";
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && cmp_key(&c[i], &c[j]) == 0;)
            j++;
        const fp__prom_series *s = c[i].s;
        if (i == 0 || strcmp(s->family, c[i - 1].s->family) != 0)
            fprintf(f,
                    "# HELP fleetprint_node_%s Min, median and max (stat; a count of wrong "
                    "elements: max) over the node's passing links and ranks of %s.\n"
                    "# TYPE fleetprint_node_%s gauge\n",
                    s->family + strlen("fleetprint_"), s->help, s->family + strlen("fleetprint_"));
        double v[3] = {c[i].value, c[i + (j - i - 1) / 2].value, c[j - 1].value};
        char labels[768], size[24];
        size_t at = s->base_end;
        memcpy(labels, s->labels, at);
        labels[at] = 0;
        fp__prom_label(labels, sizeof labels, &at, "Hostname", r->run->nodes[c[i].node]);
        if (s->key->size) {
            snprintf(size, sizeof size, "%llu", (unsigned long long)s->key->size);
            fp__prom_label(labels, sizeof labels, &at, "size", size);
        }
        size_t fl = strlen(s->family);
        bool counts_wrong =
            fl > strlen(wrong) && strcmp(s->family + fl - strlen(wrong), wrong) == 0;
        for (int k = counts_wrong ? 2 : 0; k < 3; k++)
            fprintf(f, "fleetprint_node_%s{%s,stat=\"%s\"} %.17g\n",
                    s->family + strlen("fleetprint_"), labels, stat[k], v[k]);
    }
}

/* ---- the files ------------------------------------------------------------------------ */

static const fp_verdict states[] = {FP_PASS, FP_WARN, FP_FAIL, FP_UNKNOWN};
enum { NSTATES = 4 };

static int state_index(fp_verdict v)
{
    for (int k = 0; k < NSTATES; k++)
        if (states[k] == v)
            return k;
    return NSTATES - 1;
}

typedef struct node_holds {
    const render *r;
    int node; /* nnodes: the run file */
} node_holds;

/* For drift and repeat offences (a few records each; the nodes' own
 * offender lines come from the file's verdicts): the entities whose own file
 * this is. */
static bool holds_entity(const fp_entity *e, const void *arg)
{
    const node_holds *h = arg;
    if (h->node < h->r->nnodes)
        return e->kind != FP_ENT_GROUP && strcmp(e->node, h->r->run->nodes[h->node]) == 0;
    return owner(h->r, e) == h->node;
}

/* The node file's own lines: when the run started, and how many of its links
 * (either end) and ranks are in each state. */
static void node_lines(FILE *f, const render *r, int node, const size_t *counts)
{
    char labels[256];
    size_t at = 0;
    labels[0] = 0;
    fp__prom_label(labels, sizeof labels, &at, "run_tag", r->tag);
    fp__prom_label(labels, sizeof labels, &at, "Hostname", r->run->nodes[node]);
    fprintf(f,
            "# HELP fleetprint_node_run_timestamp_seconds When the run that wrote this node's "
            "file started (Unix time): older than the run file's fleetprint_run_timestamp_seconds "
            "when the node was not in the last run.\n"
            "# TYPE fleetprint_node_run_timestamp_seconds gauge\n"
            "fleetprint_node_run_timestamp_seconds{%s} %.3f\n",
            labels, r->run->time);
    if (!r->v)
        return;
    fputs("# HELP fleetprint_node_verdicts How many of the node's links (at either end) and "
          "ranks are in each state; only those that do not pass have a fleetprint_verdict "
          "series of their own in node files.\n"
          "# TYPE fleetprint_node_verdicts gauge\n",
          f);
    static const fp_entity_kind kinds[] = {FP_ENT_LINK, FP_ENT_RANK};
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < NSTATES; s++)
            fprintf(f, "fleetprint_node_verdicts{%s,kind=\"%s\",state=\"%s\"} %zu\n", labels,
                    fp_entity_kind_name(kinds[k]), fp_verdict_name(states[s]),
                    counts[k * NSTATES + s]);
}

/* The run file's counts: entities per kind and state over the whole run. */
static void run_counts(FILE *f, const render *r)
{
    size_t count[FP_ENT_KIND_COUNT][NSTATES] = {{0}};
    for (size_t i = 0; i < fp_verdicts_count(r->v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(r->v, i);
        count[ev->entity->kind][state_index(ev->verdict)]++;
    }
    char labels[128];
    size_t at = 0;
    labels[0] = 0;
    fp__prom_label(labels, sizeof labels, &at, "run_tag", r->tag);
    fputs("# HELP fleetprint_run_verdicts How many of the run's entities of each kind are in "
          "each state.\n"
          "# TYPE fleetprint_run_verdicts gauge\n",
          f);
    for (int k = 0; k < FP_ENT_KIND_COUNT; k++)
        for (int s = 0; s < NSTATES; s++)
            fprintf(f, "fleetprint_run_verdicts{%s,kind=\"%s\",state=\"%s\"} %zu\n", labels,
                    fp_entity_kind_name((fp_entity_kind)k), fp_verdict_name(states[s]),
                    count[k][s]);
}

/* Check that every node name can be a file name beside the run file. */
static fp_status check_names(const fp_run *run)
{
    for (int i = 0; i < run->nnodes; i++) {
        const char *n = run->nodes[i];
        if (!n[0] || strchr(n, '/') || strcmp(n, "run") == 0) {
            fp_error("--prometheus DIR/: node '%s' cannot name its file fleetprint-%s.prom (a "
                     "'/', or \"run\", the run file's name): use --prometheus FILE",
                     n, n);
            return FP_EINPUT;
        }
    }
    return FP_OK;
}

/* The text of one file from f (an open_memstream) into file; FP_ENOMEM. */
static fp_status finish_text(FILE *f, char **text, size_t *len, fp_prom_file *file)
{
    if (fclose(f) != 0 || !*text) {
        free(*text);
        fp_error("Prometheus textfile %s: out of memory", file->name);
        return FP_ENOMEM;
    }
    file->text = *text;
    file->len = *len;
    return FP_OK;
}

/* Stable counting sort of the items i in [0, n) with file[i] >= 0 by file
 * (0..nfiles-1): their indices into out, file k's at out[first[k]..first[k+1]). */
static void bucket(const int *file, size_t n, int nfiles, size_t *first, size_t *out)
{
    memset(first, 0, ((size_t)nfiles + 1) * sizeof *first);
    for (size_t i = 0; i < n; i++)
        if (file[i] >= 0)
            first[file[i] + 1]++;
    for (int k = 0; k < nfiles; k++)
        first[k + 1] += first[k];
    for (size_t i = 0; i < n; i++) /* first[k] moves to the end of k's ... */
        if (file[i] >= 0)
            out[first[file[i]]++] = i;
    for (int k = nfiles; k > 0; k--) /* ... and back */
        first[k] = first[k - 1];
    first[0] = 0;
}

static fp_status render_files(render *r, const fp__prom_series *ser, size_t nser,
                              const char *last_success_from, fp_prom_files *out)
{
    const int N = r->nnodes, files = N + 1; /* the nodes', then the run's */
    fp_status st = FP_OK;
    size_t nv = r->v ? fp_verdicts_count(r->v) : 0, ncon = 0;
    size_t *sfirst = malloc(((size_t)files + 1) * sizeof *sfirst);
    size_t *vfirst = malloc(((size_t)files + 1) * sizeof *vfirst);
    size_t *cfirst = calloc((size_t)files + 1, sizeof *cfirst);
    size_t *skept = malloc((nser + 1) * sizeof *skept), *vkept = malloc((nv + 1) * sizeof *vkept);
    int *sfile = calloc(nser + 1, sizeof *sfile), *vfile = calloc(nv + 1, sizeof *vfile);
    contrib *con = malloc((2 * nser + 1) * sizeof *con);
    size_t *counts = calloc((size_t)N * 2 * NSTATES + 1, sizeof *counts);
    out->file = calloc((size_t)files, sizeof *out->file);
    if (!sfirst || !vfirst || !cfirst || !skept || !vkept || !sfile || !vfile || !con || !counts ||
        !out->file) {
        fp_error("Prometheus textfiles: out of memory");
        st = FP_ENOMEM;
        goto cleanup;
    }
    out->n = (size_t)files;
    /* values: a passing link's or rank's count in its summaries (a link's at
     * both ends), as do the collectives' values of a passing device; the rest
     * is kept in its owner's file */
    for (size_t i = 0; i < nser; i++) {
        const fp_entity *e = ser[i].entity;
        sfile[i] = owner(r, e);
        if (!per_rank(ser[i].key, e) || !r->v || verdict_of(r, e) != FP_PASS)
            continue;
        if (sfile[i] < N)
            con[ncon++] = (contrib){sfile[i], &ser[i], ser[i].value};
        int peer = e->kind == FP_ENT_LINK ? node_index(r, e->peer) : -1;
        if (peer >= 0 && peer != sfile[i])
            con[ncon++] = (contrib){peer, &ser[i], ser[i].value};
        sfile[i] = -1;
    }
    bucket(sfile, nser, files, sfirst, skept);
    qsort(con, ncon, sizeof *con, cmp_contrib);
    for (size_t i = 0; i < ncon; i++)
        cfirst[con[i].node + 1]++;
    for (int k = 0; k < files; k++)
        cfirst[k + 1] += cfirst[k];
    /* verdicts: a node's and its devices' always, a link's or rank's when it
     * does not pass; every link (either end) and rank counted per state */
    for (size_t i = 0; i < nv; i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(r->v, i);
        const fp_entity *e = ev->entity;
        int o = owner(r, e);
        vfile[i] = summarised(e->kind) && ev->verdict == FP_PASS ? -1 : o;
        if (!summarised(e->kind))
            continue;
        size_t k = (e->kind == FP_ENT_RANK) * NSTATES + (size_t)state_index(ev->verdict);
        if (o < N)
            counts[(size_t)o * 2 * NSTATES + k]++;
        int peer = e->kind == FP_ENT_LINK ? node_index(r, e->peer) : -1;
        if (peer >= 0 && peer != o)
            counts[(size_t)peer * 2 * NSTATES + k]++;
    }
    bucket(vfile, nv, files, vfirst, vkept);
    for (int i = 0; st == FP_OK && i <= N; i++) {
        fp_prom_file *file = &out->file[i];
        if (i < N) {
            snprintf(file->name, sizeof file->name, "fleetprint-%s.prom", r->run->nodes[i]);
            snprintf(file->node, sizeof file->node, "%s", r->run->nodes[i]);
        } else {
            snprintf(file->name, sizeof file->name, "fleetprint-run.prom");
        }
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
            fp_error("Prometheus textfile %s: out of memory", file->name);
            st = FP_ENOMEM;
            break;
        }
        node_holds h = {r, i};
        if (i < N)
            node_lines(f, r, i, counts + (size_t)i * 2 * NSTATES);
        else
            fp__prom_run_series(f, r->run, r->v, r->tag,
                                last_success_from ? last_success_from : "");
        for (size_t k = sfirst[i]; k < sfirst[i + 1]; k++)
            fp__prom_put_series(f, &ser[skept[k]], k > sfirst[i] ? &ser[skept[k - 1]] : NULL);
        summaries(f, r, con + cfirst[i], cfirst[i + 1] - cfirst[i]);
        if (r->v) {
            if (i == N)
                run_counts(f, r);
            fp__prom_verdicts(f, &r->uuids, r->v, r->tag, vkept + vfirst[i],
                              vfirst[i + 1] - vfirst[i]);
            fp__prom_drift(f, r->v, r->tag, holds_entity, &h);
            fp__prom_offenders(f, &r->uuids, r->v, r->tag, holds_entity, &h, vkept + vfirst[i],
                               vfirst[i + 1] - vfirst[i]);
        }
        st = finish_text(f, &text, &len, file);
    }
cleanup:
    free(sfirst);
    free(vfirst);
    free(cfirst);
    free(skept);
    free(vkept);
    free(sfile);
    free(vfile);
    free(con);
    free(counts);
    return st;
}

fp_status fp_prom_files_render(const fp_run *run, const fp_verdicts *v, const char *default_tag,
                               const char *last_success_from, fp_prom_files *out)
{
    render r = {
        .run = run, .v = v, .tag = run->tag[0] ? run->tag : default_tag, .nnodes = run->nnodes};
    fp__prom_series *ser = NULL;
    size_t nser = 0;
    out->n = 0;
    out->file = NULL;
    fp_status st = check_names(run);
    if (st != FP_OK)
        return st;
    r.by_name = malloc(((size_t)run->nnodes + 1) * sizeof *r.by_name);
    r.njudged = v ? fp_verdicts_count(v) : 0;
    r.judged = malloc((r.njudged + 1) * sizeof *r.judged);
    if (!r.by_name || !r.judged) {
        fp_error("Prometheus textfiles: out of memory");
        st = FP_ENOMEM;
        goto cleanup;
    }
    for (int i = 0; i < run->nnodes; i++)
        r.by_name[i] = i;
    qsort_r(r.by_name, (size_t)run->nnodes, sizeof *r.by_name, cmp_node_names, (void *)run);
    for (int i = 1; i < run->nnodes; i++)
        if (strcmp(run->nodes[r.by_name[i]], run->nodes[r.by_name[i - 1]]) == 0) {
            fp_error("--prometheus DIR/: node '%s' is listed twice in the run",
                     run->nodes[r.by_name[i]]);
            st = FP_EINPUT;
            goto cleanup;
        }
    for (size_t i = 0; i < r.njudged; i++)
        r.judged[i] = fp_verdicts_get(v, i);
    qsort(r.judged, r.njudged, sizeof *r.judged, cmp_judged);
    st = fp__prom_collect(run, r.tag, &ser, &nser);
    if (st == FP_OK)
        st = fp__prom_uuids_make(&r.uuids, run);
    if (st == FP_OK)
        st = render_files(&r, ser, nser, last_success_from, out);
cleanup:
    fp__prom_uuids_free(&r.uuids);
    free(ser);
    free(r.by_name);
    free(r.judged);
    return st;
}

void fp_prom_files_free(fp_prom_files *files)
{
    for (size_t i = 0; files->file && i < files->n; i++)
        free(files->file[i].text);
    free(files->file);
    files->file = NULL;
    files->n = 0;
}

/* ---- writing a folder: all files or none ---------------------------------------------- */

bool fp_prometheus_is_dir(const char *path)
{
    struct stat sb;
    size_t n = strlen(path);
    return (n > 0 && path[n - 1] == '/') || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
}

static bool join(char *buf, size_t len, const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir);
    const char *sep = n && dir[n - 1] == '/' ? "" : "/";
    int k = snprintf(buf, len, "%s%s%s%s", dir, sep, name, suffix);
    return k >= 0 && (size_t)k < len;
}

/* Make the folder dir and any missing folder above it (buf[len]: the one
 * that could not be made, on failure, errno set). */
static bool make_dirs(const char *dir, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s", dir);
    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        bool ok = mkdir(buf, 0777) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok) {
            *p = 0;
            return false;
        }
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return false;
    return true;
}

/* Write text[0..len) to path (synced later, with the folder's file system);
 * the errno of the first failure, or 0. */
static int write_whole(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return errno ? errno : EIO;
    int err = 0;
    if (fwrite(text, 1, len, f) != len || fflush(f) != 0)
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

/* Sync the file system that holds dir: one syncfs for every file of the
 * folder, where an fsync per file cost 6 of a 1,000-node report's 8 s beside
 * other writers on this machine's disk. The errno, or 0. */
static int sync_folder(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return errno;
    int err = syncfs(fd) != 0 ? errno : 0;
    close(fd);
    return err;
}

fp_status fp_prom_files_write(const fp_prom_files *files, const char *dir)
{
    char path[4096], tmp[4096];
    if (!make_dirs(dir, path, sizeof path)) {
        fp_error("%s: cannot make the folder: %s", path, strerror(errno));
        return FP_EIO;
    }
    size_t done = 0;
    int err = 0;
    for (; done < files->n && !err; done++) {
        if (!join(tmp, sizeof tmp, dir, files->file[done].name, ".tmp")) {
            fp_error("%s: path too long", dir);
            err = ENAMETOOLONG;
            break;
        }
        err = write_whole(tmp, files->file[done].text, files->file[done].len);
        if (err) {
            join(path, sizeof path, dir, files->file[done].name, "");
            fp_error("%s: cannot write: %s (the folder's files are left as they were)", path,
                     strerror(err));
        } /* done counts this one too (the loop's step): its temporary goes below */
    }
    if (!err && (err = sync_folder(dir)) != 0)
        fp_error("%s: cannot write: %s (the folder's files are left as they were)", dir,
                 strerror(err));
    for (size_t i = 0; err && i < done; i++)
        if (join(tmp, sizeof tmp, dir, files->file[i].name, ".tmp"))
            unlink(tmp);
    if (err)
        return FP_EIO;
    for (size_t i = 0; i < files->n; i++) {
        join(tmp, sizeof tmp, dir, files->file[i].name, ".tmp");
        join(path, sizeof path, dir, files->file[i].name, "");
        if (rename(tmp, path) != 0) {
            fp_error("%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
            for (size_t k = i; k < files->n; k++)
                if (join(tmp, sizeof tmp, dir, files->file[k].name, ".tmp"))
                    unlink(tmp);
            return FP_EIO;
        }
    }
    return FP_OK;
}

fp_status fp_report_prometheus_dir(const fp_run *run, const fp_verdicts *v, const char *default_tag,
                                   const char *dir)
{
    char from[4096];
    fp_prom_files files;
    if (!join(from, sizeof from, dir, "fleetprint-run.prom", "")) {
        fp_error("%s: path too long", dir);
        return FP_EUSAGE;
    }
    fp_status st = fp_prom_files_render(run, v, default_tag, from, &files);
    if (st == FP_OK)
        st = fp_prom_files_write(&files, dir);
    fp_prom_files_free(&files);
    return st;
}
