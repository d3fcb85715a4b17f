#include "cli/stages.h"

#include "stages/persistence/persistence_stage.h"
#include "stages/proxy/proxy_stage.h"

namespace podflow::cli {

Result<pipeline::StageRegistry> AllStages() {
  pipeline::StageRegistry registry;
  PODFLOW_RETURN_IF_ERROR(registry.Register(
      "persistence", pipeline::FactoryOf<persistence::PersistenceStage>(persistence::PersistenceStage::Create)));
  PODFLOW_RETURN_IF_ERROR(registry.Register(
      "proxy", pipeline::FactoryOf<proxy::ProxyStage>(proxy::ProxyStage::Create)));
  return registry;
}

}  // namespace podflow::cli
