/* fleetprint report: render a run for people and dashboards (HTML, Prometheus,
 * JSON, JUnit) with detect's loading and outputs. */
#include "app.h"
#include "fleetprint/log.h"

/* `report` is detect's loading and outputs for people and dashboards: it
 * renders a run whatever its verdict, then exits as detect does (1 when the
 * verdict it printed is fail), so its exit code never contradicts its output. */
static fp_status report_main(const void *config, fp_world *w)
{
    const detect_cfg *c = config;
    if (!c->print_rules && !c->out.html && !c->out.prometheus && !c->out.json && !c->out.junit) {
        fp_error("report: nothing to write: give --html FILE, --prometheus FILE, --json or --junit");
        return FP_EUSAGE;
    }
    return fp_app_detect_main(config, w);
}

const fp_command fp_cmd_report = {
    .name = "report",
    .summary = "render a run: HTML (verdicts, link matrix, timeline), Prometheus textfile",
    .opts = fp_app_detect_opts,
    .config_size = sizeof(detect_cfg),
    .needs_world = false,
    .run = report_main,
};

