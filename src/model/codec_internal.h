// Shared between the codec's decode and encode halves. Private to src/model.
#pragma once

#include "model/schema_index.h"

namespace podflow::model {

// The index over the embedded object schema (schemas/api.fbs), built once.
const SchemaIndex& ApiSchema();

}  // namespace podflow::model
