#include "cli/api_session.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "client/wire.h"
#include "messages_generated.h"
#include "pipeline/config.h"
#include "pipeline/credentials.h"

namespace podflow::cli {

Result<ToolEndpoints> ResolveEndpoints(const std::string& config_file, const std::string& data_dir,
                                       const std::string& submit, const std::string& api, const std::string& watch,
                                       const std::string& token) {
  Result<pipeline::ClusterConfig> config = pipeline::LoadConfig(config_file);
  if (!config.ok()) return config.status();
  if (!data_dir.empty()) config->data_dir = data_dir;
  ToolEndpoints e;
  e.submit = submit.empty() ? config->Endpoint("submit") : submit;
  e.apiwatch = config->Endpoint("apiwatch");
  e.api = api.empty() ? config->Endpoint("api") : api;
  e.watch = watch.empty() ? config->Endpoint("watch") : watch;
  e.data_dir = config->data_dir;
  e.token = token;
  if (e.token.empty()) {
    Result<std::string> admin = pipeline::ReadAdminToken(config->data_dir);
    if (!admin.ok()) return admin.status();
    e.token = *admin;
  }
  return e;
}

Result<std::string> ReadInput(const std::string& path) {
  std::stringstream s;
  if (path == "-") {
    s << std::cin.rdbuf();
    return s.str();
  }
  std::ifstream in(path);
  if (!in) return Status::NotFound("the path \"" + path + "\" does not exist");
  s << in.rdbuf();
  return s.str();
}

Result<std::vector<std::string>> ExpandFiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (arg != "-" && std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(arg);
    }
  }
  return out;
}

Result<std::unique_ptr<ApiSession>> ApiSession::Open(const ToolEndpoints& endpoints) {
  std::unique_ptr<ApiSession> session(new ApiSession);
  PODFLOW_RETURN_IF_ERROR(pipeline::SecureTool(session->context_, endpoints.data_dir));
  session->api_ = std::make_unique<client::ApiCaller>(session->context_, endpoints.submit, endpoints.token);
  session->token_ = endpoints.token;
  session->endpoint_ = endpoints.submit;
  session->watch_endpoint_ = endpoints.apiwatch;
  return session;
}

Result<ApiResponse> ApiSession::Call(const ApiCall& call) {
  Result<ApiResponse> out = api_->Call(call);
  // Printed as they come, as kubectl's warning handler does.
  if (out.ok()) {
    for (const std::string& w : out->warnings) std::fprintf(stderr, "Warning: %s\n", w.c_str());
  }
  return out;
}

Result<std::unique_ptr<ApiWatchStream>> ApiSession::Watch(const ApiCall& call) {
  ApiCall watch = call;
  watch.verb = "watch";
  Result<std::unique_ptr<bus::StreamClient>> stream = bus::StreamClient::Open(
      context_, watch_endpoint_, 16, [&](flatbuffers::FlatBufferBuilder& fbb, uint64_t) -> bus::ReplyBody {
        return {msg::Body::ApiRequest, client::BuildApiRequest(fbb, watch, token_).Union()};
      });
  if (!stream.ok()) return stream.status();
  return std::make_unique<ApiWatchStream>(std::move(*stream));
}

Result<std::optional<ApiWatchStream::Frame>> ApiWatchStream::Next(std::chrono::milliseconds timeout) {
  Result<std::optional<bus::Frame>> next = stream_->Next(timeout);
  if (!next.ok()) return next.status();
  if (!next->has_value()) return std::optional<Frame>();
  const msg::ApiWatchFrame* frame = (*next)->envelope().body_as_ApiWatchFrame();
  if (frame == nullptr) return Status::Internal("the API's watch sent something else than an ApiWatchFrame");
  Frame out;
  out.end = frame->end();
  if (frame->events()) {
    for (const msg::ApiWatchEvent* e : *frame->events()) {
      ApiWatchEvent event;
      event.type = e->type() ? e->type()->str() : "";
      if (e->object()) event.object = client::FromMsg(*e->object());
      if (e->status()) event.status = model::ReadApiStatus(*e->status());
      out.events.push_back(std::move(event));
    }
  }
  return std::optional<Frame>(std::move(out));
}

Result<ApiResponse> ApiSession::ListAll(ApiCall call, int64_t page) {
  call.verb = "list";
  call.limit = page;
  call.continue_token.clear();
  ApiResponse all;
  while (true) {
    Result<ApiResponse> reply = Call(call);
    if (!reply.ok()) return reply.status();
    if (!reply->status.success()) return reply;
    if (all.objects.empty()) {
      all.status = reply->status;
      all.revision = reply->revision;
    }
    for (KeyValue& kv : reply->objects) all.objects.push_back(std::move(kv));
    if (reply->continue_token.empty()) return all;
    call.continue_token = reply->continue_token;
  }
}

void AddConnectionFlags(CLI::App* cmd, ConnectionFlags* flags) {
  cmd->add_option("--config", flags->config, "The pipeline config (default: the embedded one)");
  cmd->add_option("--data-dir", flags->data_dir,
                  "The pipeline's data dir, whose keys and admin token are used (default: the config's storage.dataDir)");
  cmd->add_option("--server", flags->server, "The submit endpoint (default: the config's)");
  cmd->add_option("--token", flags->token, "Bearer token (default: the data dir's admin token)");
}

Result<std::unique_ptr<ApiSession>> Connect(const ConnectionFlags& flags) {
  Result<ToolEndpoints> endpoints = ResolveEndpoints(flags.config, flags.data_dir, flags.server, "", "", flags.token);
  if (!endpoints.ok()) return endpoints.status();
  return ApiSession::Open(*endpoints);
}

}  // namespace podflow::cli
