// The API's REST verbs over the bus: one ApiRequest to the admission stage
// (kube-apiserver's front half) and its ApiReply, as the CLI and the
// controllers make them. The API authenticates a tool by its bearer token
// and a controller by the bus identity it speaks as.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "bus/bus.h"
#include "log/log.h"
#include "model/api_status.h"

namespace podflow::client {

// One API request, as ApiRequest carries it.
struct ApiCall {
  std::string verb;       // get list create update patch delete deletecollection
  std::string resource;   // "pods", "deployments.apps"
  std::string namespace_;
  std::string name;
  std::string subresource;
  std::string body;
  std::string patch_type;  // "strategic", "merge", "json"
  bool dry_run = false;
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;
  // delete: the object must still be the one of this uid, and unchanged
  // since this resourceVersion (DeleteOptions.preconditions).
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;            // list: a page of at most this many
  std::string continue_token;   // list: the next page
  // watch:
  std::string resource_version;  // events after it; "" or "0": the current objects as ADDED first
  bool allow_watch_bookmarks = false;
  int64_t timeout_seconds = 0;   // the server ends the watch after this long (0: never)
  // get pods/log (kubectl logs' flags):
  struct LogOptions {
    std::string container;
    bool previous = false;
    bool timestamps = false;
    std::optional<int64_t> tail_lines, since_seconds, limit_bytes;
    std::optional<int64_t> from_line;  // -f: the lines after the first N of the run
  };
  std::optional<LogOptions> log;
  // create pods/exec (kubectl exec's flags): a command to start ...
  struct ExecOptions {
    std::string container;
    std::vector<std::string> command;
    bool with_stdin = false;
    bool tty = false;
    uint16_t rows = 0, cols = 0;
  };
  std::optional<ExecOptions> exec;
  // ... or a turn of the session it started.
  struct ExecInput {
    std::string session;
    std::string data;
    bool close_stdin = false;
    uint16_t rows = 0, cols = 0;
  };
  std::optional<ExecInput> exec_input;
};

// create pods/exec: the session, and what its command printed since the
// last turn.
struct ExecOutput {
  std::string session;
  std::string out, err;
  bool exited = false;
  int32_t exit_code = 0;
  uint64_t input_waiting = 0;  // input sent that the command has not taken yet
  std::string error;  // a refusal as kubectl prints it after "error: "
};

struct ApiResponse {
  model::ApiStatusInfo status;
  std::vector<KeyValue> objects;
  int64_t revision = 0;
  std::string continue_token;  // list: more remain
  std::vector<std::string> warnings;
  std::string log;       // get pods/log: the container's log ...
  int64_t log_lines = 0;  // ... how many lines its run has printed so far ...
  std::string log_run;    // ... and that run's container ID
  ExecOutput exec;        // create pods/exec
};

// `call` as the ApiRequest `fbb` gets, with bearer token `token` ("" for a
// caller the bus identity authenticates).
flatbuffers::Offset<msg::ApiRequest> BuildApiRequest(flatbuffers::FlatBufferBuilder& fbb, const ApiCall& call,
                                                     const std::string& token);

// The ApiReply in `reply`, read; Internal when it holds something else.
Result<ApiResponse> ReadApiReply(const bus::Frame& reply);

// A kind as an ApiRequest's resource names it: "pods", "deployments.apps".
std::string ResourceArg(const model::KindInfo& kind);

// Calls the API at `endpoint` (the submit channel). One call at a time;
// not copyable (owns a socket).
class ApiCaller {
 public:
  // Speaks as `identity` (one of the context's, "" its default), with
  // bearer token `token` ("" : the identity is who calls).
  ApiCaller(bus::Context& context, const std::string& endpoint, std::string token = {}, std::string identity = {});
  // The server's answer; a Status only when it could not be asked.
  Result<ApiResponse> Call(const ApiCall& call, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Creates every document of `manifest` in one SubmitRequest (as
  // podflow-publish does): each one's outcome, in order, or the whole
  // request's refusal as a failed status.
  struct Submitted {
    std::string name;  // as created (a generateName filled in)
    model::ApiStatusInfo status;
  };
  Result<std::vector<Submitted>> Submit(const std::string& manifest,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(30));
  const std::string& endpoint() const { return rpc_.endpoint(); }

 private:
  bus::RpcClient rpc_;
  std::string token_;
};

}  // namespace podflow::client
