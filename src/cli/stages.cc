#include "cli/stages.h"

#include "stages/admission/admission_stage.h"
#include "stages/binding/binding_stage.h"
#include "stages/controllers/controllers_stage.h"
#include "stages/persistence/persistence_stage.h"
#include "stages/proxy/proxy_stage.h"
#include "stages/runtime/runtime_stage.h"
#include "stages/scheduling/scheduling_stage.h"
#include "stages/status/status_stage.h"

namespace podflow::cli {

Result<pipeline::StageRegistry> AllStages() {
  pipeline::StageRegistry registry;
  PODFLOW_RETURN_IF_ERROR(registry.Register<persistence::PersistenceStage>(persistence::PersistenceStage::Create));
  PODFLOW_RETURN_IF_ERROR(registry.Register<admission::AdmissionStage>(admission::AdmissionStage::Create));
  PODFLOW_RETURN_IF_ERROR(registry.Register<scheduling::SchedulingStage>(scheduling::SchedulingStage::Create));
  PODFLOW_RETURN_IF_ERROR(registry.Register<binding::BindingStage>(binding::BindingStage::Create));
  PODFLOW_RETURN_IF_ERROR(registry.Register<runtime::RuntimeStage>(runtime::RuntimeStage::Create));
  PODFLOW_RETURN_IF_ERROR(registry.Register<proxy::ProxyStage>(proxy::ProxyStage::Create));
  PODFLOW_RETURN_IF_ERROR(registry.Register<status::StatusStage>(status::StatusStage::Create));
  PODFLOW_RETURN_IF_ERROR(
      registry.Register<controllers::ControllersStage>(controllers::ControllersStage::Create));
  return registry;
}

}  // namespace podflow::cli
