// The one explicit registry of pipeline stages: name -> factory.
#pragma once

#include "pipeline/stage.h"

namespace podflow::cli {

// Every stage podflow has. Invalid if two register under one name.
Result<pipeline::StageRegistry> AllStages();

}  // namespace podflow::cli
