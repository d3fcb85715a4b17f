#include "cli/status_text.h"

namespace podflow::cli {

bool IsSuccess(const msg::ApiStatus& status) {
  return status.status() && status.status()->str() == "Success";
}

std::string KubectlError(const msg::ApiStatus& status) {
  std::string reason = status.reason() ? status.reason()->str() : "";
  std::string message = status.message() ? status.message()->str() : "";
  if (reason == "Unauthorized") return "error: You must be logged in to the server (Unauthorized)";
  if (reason.empty()) return "error: " + message;
  return "Error from server (" + reason + "): " + message;
}

}  // namespace podflow::cli
