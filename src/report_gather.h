/* The report's figures gathered from every rank (src/report.c) at the end of a run. */
#ifndef H5G_SRC_REPORT_GATHER_H
#define H5G_SRC_REPORT_GATHER_H

#include "src/report.h"
#include "src/run.h"

/* Collective. */
int h5g_report_gather(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *extent, double total_seconds, h5g_report *rep);

#endif
