// tests/worker/agent/read_to_exit.h
//
// For the tests of TrainerProcess and TrainerGang: reads a trainer's output until it ends (failing
// the test after `read_for`), then waits up to 30 s for its exit (failing the test without one; the
// exit is then a default TrainerExit, which the failed test does not rely on).
#pragma once

#include <chrono>
#include <optional>

#include <gtest/gtest.h>

#include "worker/agent/trainer_process.h"

namespace rung::agent::testing {

struct Finished {
  TrainerOutput output;
  TrainerExit exit;
};

// `Trainer`: TrainerProcess or TrainerGang (ReadOutput and Wait).
template <typename Trainer>
Finished ReadToExit(Trainer& trainer, std::chrono::steady_clock::duration read_for) {
  Finished finished;
  const auto deadline = std::chrono::steady_clock::now() + read_for;
  while (trainer.ReadOutput(std::chrono::milliseconds(100), &finished.output)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the trainer's output did not end";
      break;
    }
  }
  std::optional<TrainerExit> exit = trainer.Wait(std::chrono::seconds(30));
  EXPECT_TRUE(exit.has_value()) << "the trainer did not exit";
  if (exit) finished.exit = *exit;
  return finished;
}

}  // namespace rung::agent::testing
