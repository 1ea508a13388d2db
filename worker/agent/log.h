// worker/agent/log.h
//
// The agent's diagnostic lines on stderr: "rung-worker <UTC time>: <message>", one write per line so
// lines of concurrent threads never interleave. (Trainer output never goes here: it goes to the
// attempt's folder and to the coordinator.)
//
// Example:
//   AgentLog("leased trial " + std::to_string(id) + " attempt " + std::to_string(attempt));
//   AgentLog("giving up after " + SecondsText(timeout));   // "giving up after 1.5 s"
//
// Thread safety: thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace rung::agent {

// Writes one line to stderr.
void AgentLog(const std::string& message);

// A duration as the agent's lines say it: "150 s", "1.5 s".
std::string SecondsText(std::chrono::milliseconds duration);

}  // namespace rung::agent
