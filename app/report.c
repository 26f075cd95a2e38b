/* fleetprint report: render a run for people and dashboards (HTML, Prometheus,
 * JSON, JUnit) with detect's loading and outputs. */
#include "app.h"
#include "fleetprint/log.h"

/* report's rows: detect's inputs and the outputs for people and dashboards
 * (no drain lists, --explain or rule tools: those are detect's) */
static const fp_opt report_opts[] = {
    FP_DETECT_INPUT_OPTS,
    FP_DETECT_REPORT_OPTS(detect_cfg, out),
    {"contended", 0, FP_OPT_FLAG, offsetof(detect_cfg, contended), NULL,
     "the run's ranks shared CPU cores: use the rules' contended thresholds (default: as the "
     "run recorded, which preflight does)"},
    {"quiet", 'q', FP_OPT_FLAG, offsetof(detect_cfg, out.quiet), NULL,
     "no per-entity lines, only the verdict"},
    {0},
};

/* `report` is detect's loading and outputs for people and dashboards: it
 * renders a run whatever its verdict, then exits as detect does (1 when the
 * verdict it printed is fail), so its exit code never contradicts its output. */
static fp_status report_main(const void *config, fp_world *w)
{
    const detect_cfg *c = config;
    if (!c->out.html && !c->out.prometheus && !c->out.json && !c->out.junit) {
        fp_error("report: nothing to write: give --html FILE, --prometheus FILE|DIR/, --json or "
                 "--junit");
        return FP_EUSAGE;
    }
    (void)w;
    return fp_app_detect_as(c, "report");
}

const fp_command fp_cmd_report = {
    .name = "report",
    .summary = "render a run: HTML (verdicts, link matrix, timeline), Prometheus textfile",
    .opts = report_opts,
    .config_size = sizeof(detect_cfg),
    .needs_world = false,
    .run = report_main,
};

