// get pods/log and create pods/exec, as kube-apiserver serves them: the
// options checked, the pod read, the container named (or the pod's only
// one), then the node's kubelet asked — the runtime stage, on the kubelet
// channel. An exec is a session: its start, then turns of input and output,
// each authorized as its start was.
#include <variant>

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

bus::ReplyBody ExecReply(flatbuffers::FlatBufferBuilder& fbb, const ApiStatusInfo& status,
                         const msg::ExecOutput* output = nullptr) {
  auto written = WriteApiStatus(fbb, status);
  flatbuffers::Offset<msg::ExecOutput> copied;
  if (output != nullptr) {
    const auto bytes = [&fbb](const flatbuffers::Vector<uint8_t>* v) {
      return fbb.CreateVector(v ? v->data() : nullptr, v ? v->size() : 0);
    };
    copied = msg::CreateExecOutput(fbb, fbb.CreateString(Text(output->session())), bytes(output->out()),
                                   bytes(output->err()), output->exited(), output->exit_code(),
                                   output->input_waiting(), fbb.CreateString(Text(output->error())));
  }
  msg::ApiReplyBuilder b(fbb);
  b.add_status(written);
  if (output != nullptr) b.add_exec(copied);
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

// The pod of a pods/log or pods/exec request and the container it names,
// as kube-apiserver resolves them; or its refusal.
struct PodContainer {
  std::string key, uid, node, container;
};
std::variant<PodContainer, ApiStatusInfo> ResolveContainer(client::ApiClient& client, const std::string& ns,
                                                           const std::string& name, std::string container) {
  const model::KindInfo& pods = model::Kind("Pod");
  const std::string key = model::ObjectKey(pods, ns, name);
  Result<std::optional<KeyValue>> stored = client.Get(key);
  if (!stored.ok()) return InternalErrorStatus(stored.status().ToString());
  if (!stored->has_value()) return NotFoundStatus(pods, name);
  if (!model::VerifyObject(pods, (*stored)->value).ok()) {
    return InternalErrorStatus("the stored pod " + key + " is not a valid Pod");
  }
  const api::Pod* pod = flatbuffers::GetRoot<api::Pod>((*stored)->value.data());
  const api::PodSpec* spec = pod->spec();
  if (container.empty()) {
    const size_t count = spec && spec->containers() ? spec->containers()->size() : 0;
    if (count == 0) return BadRequestStatus("no containers in pod " + name);
    if (count > 1) {
      std::string message = "a container name must be specified for pod " + name + ", choose one of: [" +
                            Names(spec->containers()) + "]";
      if (spec->init_containers() && spec->init_containers()->size() > 0) {
        message += " or one of the init containers: [" + Names(spec->init_containers()) + "]";
      }
      return BadRequestStatus(message);
    }
    container = spec->containers()->Get(0)->name() ? spec->containers()->Get(0)->name()->str() : "";
  } else if (spec == nullptr || !model::HasContainer(*spec, container)) {
    return BadRequestStatus("container " + container + " is not valid for pod " + name);
  }
  return PodContainer{key, pod->metadata() && pod->metadata()->uid() ? pod->metadata()->uid()->str() : "",
                      Text(spec->node_name()), std::move(container)};
}

// The kubelet's reply of type `T` to `body` (null when there is none) and
// its status, or why there is none.
template <typename T>
std::pair<const T*, ApiStatusInfo> AskKubelet(bus::RpcClient& kubelet, flatbuffers::FlatBufferBuilder& ask,
                                              msg::Body type, flatbuffers::Offset<void> body, const std::string& node,
                                              std::optional<bus::Frame>& answer) {
  // A little longer than the runtime gives its loop (5 s), so that its
  // answer, even a late one, is the one passed on.
  Result<bus::Frame> got = kubelet.Call(ask, type, body, std::chrono::seconds(6));
  if (!got.ok()) {
    return {nullptr, InternalErrorStatus("the kubelet" + (node.empty() ? "" : " of node " + node) +
                                         " did not answer: " + got.status().ToString())};
  }
  answer.emplace(std::move(*got));
  const T* reply = answer->envelope().template body_as<T>();
  if (reply == nullptr || reply->status() == nullptr) {
    return {nullptr, InternalErrorStatus("the kubelet answered with something else than a " +
                                         std::string(msg::EnumNameBody(msg::BodyTraits<T>::enum_value)))};
  }
  return {reply, ReadApiStatus(*reply->status())};
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
  auto resolved = ResolveContainer(worker.client, ns, name, Text(options.container()));
  if (auto* refused = std::get_if<ApiStatusInfo>(&resolved)) return LogReply(fbb, *refused);
  const PodContainer& target = std::get<PodContainer>(resolved);
  const model::KindInfo& pods = model::Kind("Pod");
  // A pod on no node yet has no log.
  if (target.node.empty()) return LogReply(fbb, model::OkStatus(pods, name));

  flatbuffers::FlatBufferBuilder ask;
  auto forwarded =
      msg::CreatePodLogOptions(ask, ask.CreateString(target.container), options.previous(), options.timestamps(),
                               options.tail_lines(), options.since_seconds(), options.limit_bytes(), options.from_line());
  auto body = msg::CreateContainerLogRequest(ask, ask.CreateString(target.key), ask.CreateString(target.uid), forwarded);
  std::optional<bus::Frame> answer;
  auto [reply, status] = AskKubelet<msg::ContainerLogReply>(worker.kubelet, ask, msg::Body::ContainerLogRequest,
                                                            body.Union(), target.node, answer);
  if (!status.success()) return LogReply(fbb, status);
  return LogReply(fbb, model::OkStatus(pods, name), reply);
}

bus::ReplyBody AdmissionStage::HandlePodExec(Worker& worker, const msg::ApiRequest& request, const UserInfo& user,
                                             const std::string& ns, const std::string& name,
                                             flatbuffers::FlatBufferBuilder& fbb) {
  const msg::PodExecOptions* options = request.exec_options();
  const msg::ExecInput* input = request.exec_input();
  if ((options == nullptr) == (input == nullptr)) {
    return ExecReply(fbb, BadRequestStatus("a pods/exec request carries either the command to start or a session's input"));
  }
  const std::string key = model::ObjectKey(model::Kind("Pod"), ns, name);
  flatbuffers::FlatBufferBuilder ask;
  flatbuffers::Offset<msg::ContainerExecRequest> body;
  std::string node;
  if (input != nullptr) {
    // A turn of a session: the kubelet knows whose it is.
    auto data = input->data() ? ask.CreateVector(input->data()->data(), input->data()->size()) : 0;
    auto turn = msg::CreateExecInput(ask, ask.CreateString(Text(input->session())), data, input->close_stdin(),
                                     input->rows(), input->cols());
    body = msg::CreateContainerExecRequest(ask, ask.CreateString(key), 0, ask.CreateString(user.name), 0, turn);
  } else {
    if (options->command() == nullptr || options->command()->size() == 0) {
      return ExecReply(fbb, BadRequestStatus("you must specify at least 1 command"));
    }
    auto resolved = ResolveContainer(worker.client, ns, name, Text(options->container()));
    if (auto* refused = std::get_if<ApiStatusInfo>(&resolved)) return ExecReply(fbb, *refused);
    const PodContainer& target = std::get<PodContainer>(resolved);
    if (target.node.empty()) return ExecReply(fbb, BadRequestStatus("pod " + name + " does not have a host assigned"));
    node = target.node;
    std::vector<flatbuffers::Offset<flatbuffers::String>> command;
    for (const flatbuffers::String* arg : *options->command()) command.push_back(ask.CreateString(arg));
    auto forwarded = msg::CreatePodExecOptions(ask, ask.CreateString(target.container), ask.CreateVector(command),
                                               options->with_stdin(), options->tty(), options->rows(), options->cols());
    body = msg::CreateContainerExecRequest(ask, ask.CreateString(target.key), ask.CreateString(target.uid),
                                           ask.CreateString(user.name), forwarded);
  }
  std::optional<bus::Frame> answer;
  auto [reply, status] = AskKubelet<msg::ContainerExecReply>(worker.kubelet, ask, msg::Body::ContainerExecRequest,
                                                             body.Union(), node, answer);
  const msg::ExecOutput* output = reply != nullptr ? reply->output() : nullptr;
  // A refusal of the kubelet's is passed on with its words for kubectl.
  return ExecReply(fbb, status.success() ? model::OkStatus(model::Kind("Pod"), name) : status, output);
}

}  // namespace podflow::admission
