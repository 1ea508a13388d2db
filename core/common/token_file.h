// core/common/token_file.h
//
// Bearer tokens live in files only their owner may read (mode 0600): the coordinator reads the user
// and worker tokens from such files, `rung-worker` the worker token. This is the one reader clients
// share; its checks match the coordinator's (coordinator/server/auth.h ReadTokenFile, which can
// delegate here).
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(std::string token, ReadBearerTokenFile("/etc/rung/worker.token"));
//   context.AddMetadata("authorization", "Bearer " + token);   // an error's message says what to fix
//
// Thread safety: reentrant.
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung {

// Reads the token from `path`, without surrounding whitespace.
// Errors: NOT_FOUND (no such file), FAILED_PRECONDITION (not a regular file, unreadable, or group or
// others have access: the message says `chmod 600`), INVALID_ARGUMENT (empty, shorter than 16
// characters, or characters outside the bearer-token alphabet [A-Za-z0-9-._~+/=]). Messages never
// contain the token.
StatusOr<std::string> ReadBearerTokenFile(const std::string& path);

}  // namespace rung
