#include "log/rocks_status.h"

#include <string>

namespace podflow::log_internal {

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  std::string message = "rocksdb " + std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(std::move(message));
  return Status::IOError(std::move(message));
}

}  // namespace podflow::log_internal
