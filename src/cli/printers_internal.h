// Per-kind row builders behind BuildTable (internal to src/cli).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"
#include "cli/printers.h"

namespace podflow::cli {

std::vector<std::string> PodRow(const api::PodT& pod, const PrintOptions& options, TimePoint now);

// kubectl's columns for one kind (printers_kinds.cc): the header, what -o
// wide adds, and the row of one verified object.
struct KindPrinter {
  std::string_view kind;
  std::vector<std::string> header;
  std::vector<std::string> wide;
  std::vector<std::string> (*row)(std::string_view bytes, bool wide, TimePoint now);
};
// The printer of `kind`, or nullptr (pods, nodes, services, endpoints and
// events have their own in BuildTable; other kinds print NAME and AGE).
const KindPrinter* FindKindPrinter(std::string_view kind);

}  // namespace podflow::cli
