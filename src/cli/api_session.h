// A command-line tool's session with the API: the endpoints the pipeline's
// config names, the data dir's keys and admin token, and one ApiRequest at
// a time to the admission stage (kube-apiserver's REST verbs). Also the -f
// inputs kubectl takes: files, directories and stdin.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.h"
#include "bus/bus.h"
#include "log/log.h"
#include "client/api_calls.h"
#include "model/api_status.h"

namespace podflow::cli {

// Where a tool reaches the pipeline, and as whom.
struct ToolEndpoints {
  std::string submit, apiwatch, api, watch, token, data_dir;
};

// From the config (`config_file`, "" for the embedded default), with the
// overrides a command line gave ("" keeps the config's). The token defaults
// to the data dir's admin token.
Result<ToolEndpoints> ResolveEndpoints(const std::string& config_file, const std::string& data_dir,
                                       const std::string& submit, const std::string& api, const std::string& watch,
                                       const std::string& token);

// The flags of the commands that speak to the API: where it is and as whom.
struct ConnectionFlags {
  std::string config, data_dir, server, token;
};
// Adds --config, --data-dir, --server (the submit endpoint) and --token.
void AddConnectionFlags(CLI::App* cmd, ConnectionFlags* flags);

// The text of a -f argument ("-": stdin).
Result<std::string> ReadInput(const std::string& path);
// -f arguments expanded as kubectl does: a directory means its .yaml, .yml
// and .json files, in name order.
Result<std::vector<std::string>> ExpandFiles(const std::vector<std::string>& args);

// One API request and its answer: the client's (client/api_calls.h).
using ApiCall = client::ApiCall;
using ApiResponse = client::ApiResponse;
using client::ResourceArg;

// One event of a watch, as kube-apiserver streams it.
struct ApiWatchEvent {
  std::string type;              // ADDED MODIFIED DELETED BOOKMARK ERROR
  KeyValue object;               // BOOKMARK: only mod_revision
  model::ApiStatusInfo status;   // ERROR
};

// A watch the API streams (ApiSession::Watch). Not copyable; destroying it
// ends the watch.
class ApiWatchStream {
 public:
  struct Frame {
    std::vector<ApiWatchEvent> events;
    bool end = false;  // the watch ended (its timeout, or the ERROR among the events)
  };
  explicit ApiWatchStream(std::unique_ptr<bus::StreamClient> stream) : stream_(std::move(stream)) {}
  // The next frame, nullopt when none came within `timeout`.
  Result<std::optional<Frame>> Next(std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<bus::StreamClient> stream_;
};

// Not copyable (owns a socket); one call at a time.
class ApiSession {
 public:
  static Result<std::unique_ptr<ApiSession>> Open(const ToolEndpoints& endpoints);
  // The server's answer (its warnings printed as `Warning: ...` on stderr,
  // as kubectl's warning handler does); a Status only when it could not be
  // asked.
  Result<ApiResponse> Call(const ApiCall& call);
  // A list, page after page (`page` objects read each) until the last.
  Result<ApiResponse> ListAll(ApiCall call, int64_t page = 500);
  // Opens a watch of `call.resource` (verb watch) on the apiwatch channel.
  Result<std::unique_ptr<ApiWatchStream>> Watch(const ApiCall& call);
  const std::string& endpoint() const { return endpoint_; }

 private:
  ApiSession() = default;
  bus::Context context_;
  std::unique_ptr<client::ApiCaller> api_;
  std::string token_;
  std::string endpoint_;
  std::string watch_endpoint_;
};

// A session with the API the flags name.
Result<std::unique_ptr<ApiSession>> Connect(const ConnectionFlags& flags);

// kubectl apply of every document of `files` (already expanded), printing
// each outcome as kubectl does (apply.cc); how many failed. `applied`, when
// given, gets "namespace/name" of every pod it created (those a --wait
// can see start).
int ApplyFiles(ApiSession& api, const std::vector<std::string>& files, std::vector<std::string>* applied);

}  // namespace podflow::cli
