// get pods/log, as kube-apiserver serves it: the options checked, the pod
// read, the container named (or the pod's only one), then the log asked of
// the node's kubelet — the runtime stage, on the kubelet channel.
#include "client/wire.h"
#include "model/objects.h"
#include "model/pod_phase.h"
#include "stages/admission/admission_stage.h"
#include "stages/admission/api_common.h"

namespace podflow::admission {
namespace {

bus::ReplyBody LogReply(flatbuffers::FlatBufferBuilder& fbb, const ApiStatusInfo& status,
                        const msg::ContainerLogReply* log = nullptr) {
  auto written = WriteApiStatus(fbb, status);
  auto text = log && log->log() ? fbb.CreateString(log->log()) : 0;
  auto run = log && log->run() ? fbb.CreateString(log->run()) : 0;
  msg::ApiReplyBuilder b(fbb);
  b.add_status(written);
  if (log != nullptr) {
    b.add_log(text);
    b.add_log_lines(log->lines());
    b.add_log_run(run);
  }
  return {msg::Body::ApiReply, b.Finish().Union()};
}

// kube-apiserver's checks of PodLogOptions: `PodLogOptions "x" is invalid: ...`.
std::optional<ApiStatusInfo> InvalidOptions(const msg::PodLogOptions& o, const std::string& pod) {
  std::string why;
  if (o.tail_lines() && *o.tail_lines() < 0) {
    why = "tailLines: Invalid value: " + std::to_string(*o.tail_lines()) + ": must be greater than or equal to 0";
  } else if (o.limit_bytes() && *o.limit_bytes() < 1) {
    why = "limitBytes: Invalid value: " + std::to_string(*o.limit_bytes()) + ": must be greater than 0";
  } else if (o.since_seconds() && *o.since_seconds() < 1) {
    why = "sinceSeconds: Invalid value: " + std::to_string(*o.since_seconds()) + ": must be greater than 0";
  } else {
    return std::nullopt;
  }
  return ApiStatusInfo{"Failure", 422, "Invalid", "PodLogOptions \"" + pod + "\" is invalid: " + why, {}};
}

std::string Names(const flatbuffers::Vector<flatbuffers::Offset<api::Container>>* list) {
  std::string out;
  if (list == nullptr) return out;
  for (const api::Container* c : *list) {
    if (!out.empty()) out += ' ';
    out += c->name() ? c->name()->str() : "";
  }
  return out;
}

}  // namespace

bus::ReplyBody AdmissionStage::HandlePodLog(Worker& worker, const msg::ApiRequest& request, const std::string& ns,
                                            const std::string& name, flatbuffers::FlatBufferBuilder& fbb) {
  static const msg::PodLogOptions* const kNone = [] {
    static flatbuffers::FlatBufferBuilder empty;
    empty.Finish(msg::CreatePodLogOptions(empty));
    return flatbuffers::GetRoot<msg::PodLogOptions>(empty.GetBufferPointer());
  }();
  const msg::PodLogOptions& options = request.log_options() ? *request.log_options() : *kNone;
  if (auto invalid = InvalidOptions(options, name)) return LogReply(fbb, *invalid);
  const model::KindInfo& pods = model::Kind("Pod");
  const std::string key = model::ObjectKey(pods, ns, name);
  Result<std::optional<KeyValue>> stored = worker.client.Get(key);
  if (!stored.ok()) return LogReply(fbb, InternalErrorStatus(stored.status().ToString()));
  if (!stored->has_value()) return LogReply(fbb, NotFoundStatus(pods, name));
  if (!model::VerifyObject(pods, (*stored)->value).ok()) {
    return LogReply(fbb, InternalErrorStatus("the stored pod " + key + " is not a valid Pod"));
  }
  const api::Pod* pod = flatbuffers::GetRoot<api::Pod>((*stored)->value.data());
  const api::PodSpec* spec = pod->spec();
  std::string container = Text(options.container());
  if (container.empty()) {
    const size_t count = spec && spec->containers() ? spec->containers()->size() : 0;
    if (count == 0) return LogReply(fbb, BadRequestStatus("no containers in pod " + name));
    if (count > 1) {
      std::string message = "a container name must be specified for pod " + name + ", choose one of: [" +
                            Names(spec->containers()) + "]";
      if (spec->init_containers() && spec->init_containers()->size() > 0) {
        message += " or one of the init containers: [" + Names(spec->init_containers()) + "]";
      }
      return LogReply(fbb, BadRequestStatus(message));
    }
    container = spec->containers()->Get(0)->name() ? spec->containers()->Get(0)->name()->str() : "";
  } else if (spec == nullptr || !model::HasContainer(*spec, container)) {
    return LogReply(fbb, BadRequestStatus("container " + container + " is not valid for pod " + name));
  }
  // A pod on no node yet has no log.
  if (spec->node_name() == nullptr || spec->node_name()->size() == 0) return LogReply(fbb, model::OkStatus(pods, name));

  flatbuffers::FlatBufferBuilder ask;
  auto forwarded =
      msg::CreatePodLogOptions(ask, ask.CreateString(container), options.previous(), options.timestamps(),
                               options.tail_lines(), options.since_seconds(), options.limit_bytes(), options.from_line());
  const std::string uid = pod->metadata() && pod->metadata()->uid() ? pod->metadata()->uid()->str() : "";
  auto body = msg::CreateContainerLogRequest(ask, ask.CreateString(key), ask.CreateString(uid), forwarded);
  // A little longer than the runtime gives its loop (5 s), so that its
  // answer, even a late one, is the one passed on.
  Result<bus::Frame> answer =
      worker.kubelet.Call(ask, msg::Body::ContainerLogRequest, body.Union(), std::chrono::seconds(6));
  if (!answer.ok()) {
    return LogReply(fbb, InternalErrorStatus("the kubelet of node " + spec->node_name()->str() +
                                             " did not answer: " + answer.status().ToString()));
  }
  const msg::ContainerLogReply* reply = answer->envelope().body_as_ContainerLogReply();
  if (reply == nullptr || reply->status() == nullptr) {
    return LogReply(fbb, InternalErrorStatus("the kubelet answered with something else than a ContainerLogReply"));
  }
  const ApiStatusInfo status = ReadApiStatus(*reply->status());
  if (!status.success()) return LogReply(fbb, status);
  return LogReply(fbb, model::OkStatus(pods, name), reply);
}

}  // namespace podflow::admission
