// coordinator/domain/lease_broker.h
//
// The long-poll behind WorkerService.Lease: asks the store for the best trial that fits a worker's
// free resources (TrialLifecycle::LeaseNextTrial: highest priority of an ACTIVE sweep first) and,
// when none fits, waits on the "work" notifier until a trial may have become leasable (submitted,
// resubmitted, resumed, retried, requeued after a failure, preemption or lease expiry) or the wait
// ends. It never spins: between two looks at the store it sleeps on the notifier, waking at the
// latest every kCancelCheck to notice a caller that went away.
//
// Each look is one transaction. Gangs (gang_leases.h): each look first asks GangLeases::Poll for this worker's rank of
// a gang formed since, and a worker that holds a reservation of a forming gang takes nothing else (it keeps waiting).
// Otherwise, when no single trial fits, the worker joins a gang (GangLeases::Join); the call that completes a gang
// notifies the "work" notifier so that the other members' calls look again and take their ranks.
//
// A quarantined worker (worker_quarantine.h) is given nothing: its looks find no trial until it is
// released (which notifies the "work" notifier) or registers again.
//
// Lease expiry is the reaper's (lease_reaper.h), whose requeues wake these waits; after granting a
// lease the broker pokes the reaper, whose next expiry may now be earlier.
//
// Example:
//   LeaseBroker broker(trials, gangs, reaper, work);
//   StatusOr<std::optional<Lease>> lease =
//       broker.Acquire({"node7-gpu0", 8, 1}, std::chrono::steady_clock::now() + std::chrono::seconds(30),
//                    [&] { return context->IsCancelled(); });
//
// Thread safety: thread-safe; any number of calls wait at once.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "coordinator/domain/change_notifier.h"
#include "coordinator/domain/lease_reaper.h"
#include "coordinator/domain/gang_leases.h"
#include "coordinator/domain/trial_lifecycle.h"

namespace rung {

// What a worker asks a lease for.
struct LeaseAsk {
  std::string worker_id;
  int64_t free_cpus = 0;
  int64_t free_gpus = 0;
};

class LeaseBroker {
 public:
  static constexpr std::chrono::seconds kCancelCheck{1};

  // REQUIRES: the arguments outlive the broker.
  LeaseBroker(Store& store, TrialLifecycle& trials, GangLeases& gangs, LeaseReaper& reaper, ChangeSignals& signals)
      : store_(store), trials_(trials), gangs_(gangs), reaper_(reaper), signals_(signals) {}

  // A lease as soon as a trial fits, or nullopt once `deadline` passed or `cancelled()` says the
  // caller went away (an ordinary lease committed while it went is handed back: ended PREEMPTED,
  // its trial PENDING again). Errors: the store's (NOT_FOUND for an unregistered worker), UNAVAILABLE when
  // the notifier was closed (shutdown).
  StatusOr<std::optional<Lease>> Acquire(const LeaseAsk& ask, std::chrono::steady_clock::time_point deadline,
                                       const std::function<bool()>& cancelled);

  // One look at the store inside the caller's Store::Write transaction: a gang rank, a single
  // lease, or nothing (yet); no waiting, no lease expiry. `*gang_formed` says whether this look
  // formed a gang; the caller must then call Leased() after its commit.
  StatusOr<std::optional<Lease>> LookIn(Tables& tables, const LeaseAsk& ask, bool* gang_formed) const;
  // After a commit that leased `lease` (if any) or formed a gang: signals the change (WorkQueued for
  // a gang, so that the other members' polls look again), and the reaper learns of the new lease.
  void Leased(const std::optional<Lease>& lease, bool gang_formed);

 private:
  // One look at the store in a transaction of its own.
  StatusOr<std::optional<Lease>> Look(const LeaseAsk& ask);

  Store& store_;
  TrialLifecycle& trials_;
  GangLeases& gangs_;
  LeaseReaper& reaper_;
  ChangeSignals& signals_;
};

}  // namespace rung
