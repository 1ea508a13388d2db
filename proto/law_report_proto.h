// proto/law_report_proto.h
//
// A scaling-law report (sweeps/fit/law_report.h, LawReport) on the wire (proto/rung.proto, LawReport),
// both ways, field for field: the coordinator sends the report it computed for GetLaws; the CLI turns
// it back into a LawReport to print it as `rung laws --from-csv` does. ToProto and FromProto are
// inverses (tests/proto/law_report_proto_test.cc).
//
// Thread safety: pure functions.
#pragma once

#include "proto/rung.pb.h"
#include "sweeps/fit/law_report.h"

namespace rung::wire {

v1::LawReport ToProto(const fit::LawReport& report);
fit::LawReport FromProto(const v1::LawReport& report);

}  // namespace rung::wire
