/* report_hw.h: the hardware sections of report.md (see report_hw.c). */
#ifndef KGATE_REPORT_HW_H
#define KGATE_REPORT_HW_H
#include "kgate/evidence.h"
#include "kgate/stats.h"
#include "base/util.h"

/* Appends the speed-of-light, telemetry and resources sections. */
void kg_report_hw_md(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an);

#endif
