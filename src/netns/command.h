// Running the network tools (iproute2's `ip`, iptables-restore) as child
// processes: argv as given (no shell), stdin fed from a string, stdout and
// stderr read back. Thread-safe (each call has its own pipes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace podflow::netns {

struct CommandResult {
  int exit_code = 0;  // 128 + N when signal N ended it
  std::string out, err;
};

// Runs argv[0] (looked up in PATH, with /usr/sbin and /sbin after it) with
// `input` on its stdin. An error only when it could not be started.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, std::string_view input = {});

// RunCommand, and an error naming the command and carrying its stderr when
// it did not exit 0.
Status RunChecked(const std::vector<std::string>& argv, std::string_view input = {});

// Whether `program` is found where RunCommand looks.
bool HasProgram(const std::string& program);

}  // namespace podflow::netns
