// kubectl's table printers (`kubectl get`, kubectl 1.32 columns) as pure
// functions over stored objects and a "now", so that they are tested without
// a pipeline. get.cc fetches the objects and prints what these return.
//
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/human_time.h"
#include "cli/tabwriter.h"
#include "model/codec.h"

namespace podflow::api {
struct PodT;
}

namespace podflow::cli {

// What -o wide and -A change.
struct PrintOptions {
  bool wide = false;
  bool all_namespaces = false;  // adds NAMESPACE first (namespaced kinds only)
};

// A table: the header and one row of cells per object.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// The rows of `objects`, each a verified FlatBuffer of `kind`, with the
// columns kubectl prints for it (NAME and AGE for kinds without a printer),
// in the given order (key order, as the api channel lists them; for events
// that is the order they were made in).
Table BuildTable(const model::KindInfo& kind, std::span<const std::string> objects,
                 const PrintOptions& options, TimePoint now);

// Cells joined by tabs through kubectl's tabwriter (min width 6, padding 3).
std::string RenderTable(const Table& table);
// The same rows (and the header when `with_header`) written into `w`, a
// writer that may be flushed between tables (kubectl's watch output).
void WriteTable(TabWriter& w, const Table& table, bool with_header);

// kubectl's "No resources found in default namespace." / "No resources found".
std::string NoResourcesMessage(const model::KindInfo& kind, std::string_view namespace_,
                               bool all_namespaces);

// The pod printer's STATUS column (kubectl printPod): status.reason or the
// phase, refined by init containers, container states and deletion.
std::string PodStatusReason(const api::PodT& pod);

}  // namespace podflow::cli
