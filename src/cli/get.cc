// `podflow get` and `podflow describe`: placeholder registration until the
// printers land (see src/cli/README.md).
#include "cli/commands.h"

namespace podflow::cli {

void AddGetCommands(CLI::App&, CommandAction&) {}

}  // namespace podflow::cli
