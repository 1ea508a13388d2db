// coordinator/client/exit_codes.h
//
// Exit codes of the `rung` command that scripts can rely on.
#pragma once

namespace rung::client {

enum ExitCode {
  kOk = 0,       // done
  kFailure = 1,  // the command ran and failed (a computation, the server)
  kUsage = 2,    // bad input: arguments, spec, CSV (the message names file:line:col where it can),
                 // an unknown sweep or trial, a request the state does not allow
  kUnavailable = 3,  // the coordinator could not be reached in time
  kDenied = 4,       // the token was missing, wrong, or not allowed to do this
};

}  // namespace rung::client
