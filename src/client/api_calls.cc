#include "client/api_calls.h"

#include "client/wire.h"
#include "messages_generated.h"
#include "model/codec.h"

namespace podflow::client {

flatbuffers::Offset<msg::ApiRequest> BuildApiRequest(flatbuffers::FlatBufferBuilder& fbb, const ApiCall& call,
                                                     const std::string& token_text) {
  auto body = fbb.CreateVector(reinterpret_cast<const uint8_t*>(call.body.data()), call.body.size());
  auto token = fbb.CreateString(token_text);
  auto verb = fbb.CreateString(call.verb);
  auto resource = fbb.CreateString(call.resource);
  auto ns = fbb.CreateString(call.namespace_);
  auto name = fbb.CreateString(call.name);
  auto subresource = fbb.CreateString(call.subresource);
  auto patch_type = fbb.CreateString(call.patch_type);
  auto policy = fbb.CreateString(call.propagation_policy);
  auto labels = fbb.CreateString(call.label_selector);
  auto fields = fbb.CreateString(call.field_selector);
  auto continue_token = fbb.CreateString(call.continue_token);
  auto resource_version = fbb.CreateString(call.resource_version);
  auto precondition_uid = fbb.CreateString(call.precondition_uid);
  auto precondition_rv = fbb.CreateString(call.precondition_resource_version);
  flatbuffers::Offset<msg::PodLogOptions> log_options;
  if (call.log) {
    const ApiCall::LogOptions& o = *call.log;
    auto opt = [](const std::optional<int64_t>& v) {
      return v ? flatbuffers::Optional<int64_t>(*v) : flatbuffers::Optional<int64_t>();
    };
    log_options = msg::CreatePodLogOptions(fbb, fbb.CreateString(o.container), o.previous, o.timestamps,
                                           opt(o.tail_lines), opt(o.since_seconds), opt(o.limit_bytes),
                                           opt(o.from_line));
  }
  flatbuffers::Offset<msg::PodExecOptions> exec_options;
  if (call.exec) {
    const ApiCall::ExecOptions& o = *call.exec;
    exec_options = msg::CreatePodExecOptions(fbb, fbb.CreateString(o.container), fbb.CreateVectorOfStrings(o.command),
                                             o.with_stdin, o.tty, o.rows, o.cols);
  }
  flatbuffers::Offset<msg::ExecInput> exec_input;
  if (call.exec_input) {
    const ApiCall::ExecInput& in = *call.exec_input;
    exec_input = msg::CreateExecInput(
        fbb, fbb.CreateString(in.session),
        fbb.CreateVector(reinterpret_cast<const uint8_t*>(in.data.data()), in.data.size()), in.close_stdin, in.rows,
        in.cols);
  }
  msg::ApiRequestBuilder b(fbb);
  b.add_token(token);
  b.add_verb(verb);
  b.add_resource(resource);
  b.add_namespace_(ns);
  b.add_name(name);
  b.add_subresource(subresource);
  b.add_body(body);
  b.add_patch_type(patch_type);
  b.add_dry_run(call.dry_run);
  if (call.grace_period_seconds) b.add_grace_period_seconds(*call.grace_period_seconds);
  b.add_propagation_policy(policy);
  b.add_label_selector(labels);
  b.add_field_selector(fields);
  b.add_limit(call.limit);
  b.add_continue_token(continue_token);
  b.add_resource_version(resource_version);
  b.add_allow_watch_bookmarks(call.allow_watch_bookmarks);
  b.add_timeout_seconds(call.timeout_seconds);
  if (call.log) b.add_log_options(log_options);
  if (call.exec) b.add_exec_options(exec_options);
  if (call.exec_input) b.add_exec_input(exec_input);
  b.add_precondition_uid(precondition_uid);
  b.add_precondition_resource_version(precondition_rv);
  return b.Finish();
}

Result<ApiResponse> ReadApiReply(const bus::Frame& reply) {
  const msg::ApiReply* api = reply.envelope().body_as_ApiReply();
  if (api == nullptr) return Status::Internal("the API answered with something else than an ApiReply");
  ApiResponse out;
  if (api->status()) out.status = model::ReadApiStatus(*api->status());
  out.revision = api->revision();
  if (api->continue_token()) out.continue_token = api->continue_token()->str();
  if (api->warnings()) {
    for (const auto* w : *api->warnings()) out.warnings.push_back(w->str());
  }
  if (api->objects()) {
    for (const msg::KeyValue* kv : *api->objects()) out.objects.push_back(FromMsg(*kv));
  }
  if (api->log()) out.log = api->log()->str();
  out.log_lines = api->log_lines();
  if (api->log_run()) out.log_run = api->log_run()->str();
  if (const msg::ExecOutput* exec = api->exec()) {
    if (exec->session()) out.exec.session = exec->session()->str();
    if (exec->out()) out.exec.out.assign(reinterpret_cast<const char*>(exec->out()->data()), exec->out()->size());
    if (exec->err()) out.exec.err.assign(reinterpret_cast<const char*>(exec->err()->data()), exec->err()->size());
    out.exec.exited = exec->exited();
    out.exec.exit_code = exec->exit_code();
    out.exec.input_waiting = exec->input_waiting();
    if (exec->error()) out.exec.error = exec->error()->str();
  }
  return out;
}

std::string ResourceArg(const model::KindInfo& kind) {
  const std::string group(model::ApiGroup(kind));
  return std::string(kind.resource) + (group.empty() ? "" : "." + group);
}

ApiCaller::ApiCaller(bus::Context& context, const std::string& endpoint, std::string token, std::string identity)
    : rpc_(context, endpoint, std::move(identity)), token_(std::move(token)) {}

Result<ApiResponse> ApiCaller::Call(const ApiCall& call, std::chrono::milliseconds timeout) {
  flatbuffers::FlatBufferBuilder fbb(call.body.size() + 512);
  auto offset = BuildApiRequest(fbb, call, token_);
  Result<bus::Frame> reply = rpc_.Call(fbb, msg::Body::ApiRequest, offset.Union(), timeout);
  if (!reply.ok()) return reply.status();
  return ReadApiReply(*reply);
}

Result<std::vector<ApiCaller::Submitted>> ApiCaller::Submit(const std::string& manifest,
                                                             std::chrono::milliseconds timeout) {
  flatbuffers::FlatBufferBuilder fbb(manifest.size() + 256);
  auto bytes = fbb.CreateVector(reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size());
  auto request = msg::CreateSubmitRequest(fbb, fbb.CreateString(token_), bytes);
  Result<bus::Frame> reply = rpc_.Call(fbb, msg::Body::SubmitRequest, request.Union(), timeout);
  if (!reply.ok()) return reply.status();
  const msg::SubmitReply* submit = reply->envelope().body_as_SubmitReply();
  if (submit == nullptr) return Status::Internal("admission answered with something else than a SubmitReply");
  if (submit->status() != nullptr && model::ReadApiStatus(*submit->status()).status != "Success") {
    return std::vector<Submitted>{{"", model::ReadApiStatus(*submit->status())}};
  }
  std::vector<Submitted> out;
  if (submit->results() == nullptr) return out;
  for (const msg::SubmitResult* r : *submit->results()) {
    Submitted s;
    if (r->name() != nullptr) s.name = r->name()->str();
    if (r->status() != nullptr) s.status = model::ReadApiStatus(*r->status());
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace podflow::client
