#include "cli/commands.h"

namespace podflow::cli {

void AddRunCommands(CLI::App&, CommandAction&) {}

}  // namespace podflow::cli
