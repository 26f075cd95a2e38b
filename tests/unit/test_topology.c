/* topology.conf: the tree, levels, pods, and errors with line numbers. */
#include <string.h>

#include "check.h"
#include "fleetprint/topology.h"

/* text must be rejected with a message starting "t.conf:<line>:" and holding what */
static int rejects(const char *text, int line, const char *what)
{
    fp_topology *t;
    char err[512], tag[32];
    if (fp_topology_parse(text, "t.conf", &t, err, sizeof err) != FP_EINPUT || t) {
        fprintf(stderr, "accepted:\n%s\n", text);
        fp_topology_free(t);
        return 0;
    }
    snprintf(tag, sizeof tag, "t.conf:%d: ", line);
    if (strncmp(err, tag, strlen(tag)) != 0 || !strstr(err, what) || strchr(err, '\n')) {
        fprintf(stderr, "error '%s' lacks '%s' / '%s'\n", err, tag, what);
        return 0;
    }
    return 1;
}

int main(void)
{
    const char *conf = "# a three-tier tree\n"
                       "\n"
                       "SwitchName=s0 Nodes=n[0-3] LinkSpeed=200   # rack 0\n"
                       "switchname=s1 nodes=n[4-7]\n"
                       "SwitchName=s2 Nodes=n[8-9],n10 \\\n"
                       "   LinkSpeed=400\n"
                       "SwitchName=p0 Switches=s[0-1]\n"
                       "SwitchName=p1 Switches=s2\n"
                       "SwitchName=top Switches=p[0-1]\n";
    fp_topology *t;
    char err[512];
    CHECK(fp_topology_parse(conf, "t.conf", &t, err, sizeof err) == FP_OK);
    if (!t) {
        fprintf(stderr, "%s\n", err);
        CHECK_DONE();
    }
    CHECK(fp_topology_nodes(t) == 11 && fp_topology_switches(t) == 6);
    CHECK(fp_topology_levels(t) == 3);
    int n5 = fp_topology_node_find(t, "n5"), n10 = fp_topology_node_find(t, "n10");
    CHECK(n5 == 5 && n10 == 10 && fp_topology_node_find(t, "n11") == -1);
    CHECK(strcmp(fp_topology_switch_name(t, fp_topology_node_leaf(t, n5)), "s1") == 0);
    CHECK(strcmp(fp_topology_switch_name(t, fp_topology_node_pod(t, n5)), "p0") == 0);
    CHECK(strcmp(fp_topology_switch_name(t, fp_topology_node_pod(t, n10)), "p1") == 0);
    CHECK(fp_topology_switch_level(t, 0) == 0 && fp_topology_switch_level(t, 3) == 1);
    CHECK(fp_topology_switch_level(t, 5) == 2 && fp_topology_switch_parent(t, 5) == -1);
    CHECK(strcmp(fp_topology_switch_link_speed(t, 2), "400") == 0);
    CHECK(fp_topology_switch_line(t, 2) == 5 && fp_topology_switch_line(t, 5) == 9);
    fp_topology_free(t);

    /* a two-level tree: the pod is the leaf's parent; a lone leaf is its own pod */
    CHECK(fp_topology_parse("SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=y1\n"
                            "SwitchName=r Switches=a\n",
                            "t.conf", &t, err, sizeof err) == FP_OK);
    CHECK(t && fp_topology_node_pod(t, 0) == 2 && fp_topology_node_pod(t, 2) == 1);
    CHECK(t && fp_topology_levels(t) == 2);
    fp_topology_free(t);

    /* malformed files: one line, with the line number */
    CHECK(rejects("SwitchName=s0 Nodes=n[0-3]\n# c\nSwitchName=s0 Nodes=n[4-7]\n", 3,
                  "duplicate switch 's0' (first defined on line 1)"));
    CHECK(rejects("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[3-5]\n", 2,
                  "node 'n3' is already under leaf switch 's0' (line 1)"));
    CHECK(rejects("SwitchName=s0 Nodes=n[0-3]\n\nSwitchName=p Switches=s[0-1]\n", 3,
                  "unknown switch 's1'"));
    CHECK(rejects("SwitchName=s0 Nodes=n1\nSwitchName=a Switches=b,s0\n"
                  "SwitchName=b Switches=c\nSwitchName=c Switches=a\n",
                  4, "cycle (each one listed by the next): a <- c <- b <- a"));
    CHECK(rejects("SwitchName=a Switches=a\n", 1, "cycle"));
    CHECK(rejects("SwitchName=s0 Nodes=n1\nSwitchName=p Switches=s0\nSwitchName=q Switches=s0\n",
                  3, "already under switch 'p' (line 2)"));
    CHECK(rejects("SwitchName=s0 Nodes=n1 Switches=s1\n", 1, "both Nodes= and Switches="));
    CHECK(rejects("\nSwitchName=s0 Nodes=n[1-\n", 2, "position 2"));
    CHECK(rejects("Nodes=n1\n", 1, "missing SwitchName"));
    CHECK(rejects("SwitchName=s0 Color=red\n", 1, "unknown key 'Color'"));
    CHECK(rejects("SwitchName=s0 Nodes=n1 Nodes=n2\n", 1, "given twice"));
    CHECK(rejects("SwitchName=s0 junk\n", 1, "expected Key=Value"));
    CHECK(rejects("SwitchName=s0 Nodes=\n", 1, "has no value"));
    CHECK(rejects("SwitchName=s0 Nodes=n[1,1]\n", 1, "listed twice"));

    /* a missing file */
    CHECK(fp_topology_load("/nonexistent/topology.conf", &t, err, sizeof err) == FP_EINPUT);
    CHECK(t == NULL && strstr(err, "/nonexistent/topology.conf: cannot open"));
    CHECK_DONE();
}
