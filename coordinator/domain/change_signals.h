// coordinator/domain/change_signals.h
//
// What the managers announce after they commit, so that nothing above them has to remember:
//   WorkQueued()  a trial may have become leasable (submitted, resumed, retried, requeued): wakes
//                 waiting Lease long-polls, and streams
//   Changed()     anything else changed: wakes streams (StreamSweepUpdates, StreamMetrics, log followers)
// A manager signals only after its transaction committed, never for a write that failed or a
// repeat that changed nothing. Long-polls and streams wait on the two notifiers.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include "coordinator/domain/change_notifier.h"

namespace rung {

class ChangeSignals {
 public:
  // What a manager holding `signals` (null: nothing to wake) announces after a commit.
  static void Announce(ChangeSignals* signals, bool work_queued) {
    if (signals == nullptr) return;
    work_queued ? signals->WorkQueued() : signals->Changed();
  }

  void WorkQueued() {
    work_.Notify();
    changes_.Notify();
  }
  void Changed() { changes_.Notify(); }
  // Wakes every waiter for good (shutdown).
  void Close() {
    work_.Close();
    changes_.Close();
  }

  ChangeNotifier& work() { return work_; }
  ChangeNotifier& changes() { return changes_; }

 private:
  ChangeNotifier work_;     // a trial may have become leasable
  ChangeNotifier changes_;  // anything changed
};

}  // namespace rung
