// coordinator/domain/crash_point.h
//
// Named points in the coordinator's code where a test can make the process die, as RocksDB's sync
// points let its tests stop at a named place: with RUNG_CRASH_POINT=<name> in the environment, the
// process exits at once (_exit, no destructors, nothing flushed: a kill at that instant) the first
// time it reaches CrashPoint("<name>"). Without the variable a crash point costs one comparison.
//
// The points (each where a decision's input has committed and the decision has not, or just after):
//   tuner.before_decision   a result committed; the search's next decision not yet taken
//   tuner.after_decision    a decision committed; its signals not yet sent
//   early_stop.before_stop  an evaluation committed; the early stop it triggers not yet written
//
// Thread safety: thread-safe (the variable is read once).
#pragma once

namespace rung {

// The exit status of a process that died at a crash point.
inline constexpr int kCrashPointExitCode = 86;

// Exits with kCrashPointExitCode, after one line on stderr naming the point, when RUNG_CRASH_POINT
// names `name`.
void CrashPoint(const char* name);

}  // namespace rung
