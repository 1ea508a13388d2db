// proto/fit_report_proto.h
//
// A fit's result rows (sweeps/fit/report_rows.h, ReportRow) on the wire (proto/rung.proto,
// FitReportRow), both ways, field for field under the same names: the coordinator sends the rows it
// computed or stored; the CLI turns them back into rows to print them as `rung fit` does.
// ToProto and FromProto are inverses (tests/proto/fit_report_proto_test.cc).
//
// Thread safety: pure functions.
#pragma once

#include "proto/rung.pb.h"
#include "sweeps/fit/report_rows.h"

namespace rung::wire {

v1::FitReportRow ToProto(const fit::ReportRow& row);
fit::ReportRow FromProto(const v1::FitReportRow& row);

}  // namespace rung::wire
