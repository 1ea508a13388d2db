// core/common/loopback_port.h
//
// A TCP port on 127.0.0.1 that nothing listens on right now: the kernel picks it (bind to port 0),
// and it is released before returning, for a child process to bind (rank 0's data-parallel
// rendezvous). Another process could take it in between; the rendezvous then fails and the
// attempt is retried, so callers need not guard against that race.
#pragma once

#include "core/common/status.h"

namespace rung {

// Errors: INTERNAL with the errno text (no socket, no port).
StatusOr<int> FreeLoopbackPort();

}  // namespace rung
