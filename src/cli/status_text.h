// How kubectl prints an API server's Status.
#pragma once

#include <string>

#include "messages_generated.h"

namespace podflow::cli {

bool IsSuccess(const msg::ApiStatus& status);

// "Error from server (Invalid): Pod \"x\" is invalid: ...",
// "Error from server (AlreadyExists): pods \"nginx-pod\" already exists",
// "error: You must be logged in to the server (Unauthorized)".
std::string KubectlError(const msg::ApiStatus& status);

}  // namespace podflow::cli
