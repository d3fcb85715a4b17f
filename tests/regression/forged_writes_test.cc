// Anyone on the machine could write anything into the event log: the api
// channel (tcp://127.0.0.1:7711) took any client, wrote whatever it sent
// (a pod moved to another node, negative CPU), and recorded as the writer
// the name the client filled in, so a forged write showed up in replay as
// "binding". The admin token was a constant in the default config.
//
// Now every tcp:// and ipc:// socket authenticates its peers with CURVE
// keys made under the data dir; the log authorizes each write by the
// identity the bus authenticated and records that identity as its writer.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "bus/bus.h"
#include "client/client.h"
#include "log_fixture.h"
#include "pipeline_fixture.h"
#include "pipeline/credentials.h"
#include "stages/persistence/persistence.h"

namespace podflow {
namespace {

using namespace std::chrono_literals;

constexpr const char* kApi = "tcp://127.0.0.1:17951";
constexpr const char* kWatch = "tcp://127.0.0.1:17952";
const std::string kPod = "/registry/pods/default/web";

// A persistence server on loopback TCP, secured as `podflow run` secures it.
struct SecuredLog {
  testing::TempDir dir;
  std::string data_dir = dir.path() + "/data";
  std::unique_ptr<EventLog> log;
  bus::Context context;
  std::unique_ptr<persistence::Server> server;

  SecuredLog() {
    REQUIRE(pipeline::EnsureCredentials(data_dir).ok());
    auto security = pipeline::LoadSecurity(data_dir, {"persistence"}, true);
    REQUIRE(security.ok());
    REQUIRE(context.Secure(std::move(*security)).ok());
    log = testing::MustOpen(testing::TestOptions(dir.path() + "/log"));
    server = std::make_unique<persistence::Server>(context, log.get(), persistence::ServerOptions{kApi, kWatch, 2});
    REQUIRE(server->Start().ok());
  }
  ~SecuredLog() { server->Stop(); }

  // A client process's context speaking as `identity`.
  std::unique_ptr<bus::Context> ClientContext(const std::string& identity) {
    auto security = pipeline::LoadSecurity(data_dir, {identity}, false);
    REQUIRE(security.ok());
    auto client = std::make_unique<bus::Context>();
    REQUIRE(client->Secure(std::move(*security)).ok());
    return client;
  }

  std::string WriterOf(Revision revision) {
    auto changes = log->ReadChanges(revision, 1);
    REQUIRE(changes.ok());
    REQUIRE(changes->size() == 1);
    return (*changes)[0]->writer;
  }
};

TEST_CASE("forged writes: a peer without the data dir's keys is not served") {
  SecuredLog f;
  REQUIRE(f.log->Put(kPod, "v1").ok());

  SECTION("a plain client (no CURVE) gets no answer") {
    bus::Context plain;
    client::ApiClient api(plain, kApi);
    auto written = api.Write({PutOp{kPod, "moved"}}, 1500ms);
    CHECK(written.status().code() == Code::kUnavailable);
  }
  SECTION("a client with keys of its own (knowing the server's) is refused by ZAP") {
    auto stranger_keys = bus::GenerateCurveKeys();
    REQUIRE(stranger_keys.ok());
    auto loaded = pipeline::LoadSecurity(f.data_dir, {}, false);
    REQUIRE(loaded.ok());
    bus::Security stranger;
    stranger.server.public_key = loaded->server.public_key;
    stranger.identities["binding"] = *stranger_keys;  // claims a stage's name
    stranger.default_identity = "binding";
    bus::Context context;
    REQUIRE(context.Secure(std::move(stranger)).ok());
    client::ApiClient api(context, kApi);
    CHECK(api.Write({PutOp{kPod, "moved"}}, 1500ms).status().code() == Code::kUnavailable);
    CHECK(api.Read(RangeRequest::Prefix("/registry/"), 500ms).status().code() == Code::kUnavailable);
  }
  auto stored = f.log->Get(kPod);
  REQUIRE(stored.ok());
  CHECK((*stored)->value == "v1");
}

TEST_CASE("forged writes: each identity writes only what its role writes") {
  SecuredLog f;
  auto created = f.log->Put(kPod, "v1");
  REQUIRE(created.ok());
  const Revision pod_revision = created->revision;

  SECTION("the tools' admin identity reads and may not write") {
    auto admin = f.ClientContext("admin");
    client::ApiClient api(*admin, kApi);
    auto read = api.Read(RangeRequest::Prefix("/registry/pods/"));
    REQUIRE(read.ok());
    CHECK(read->kvs.size() == 1);
    auto written = api.Write({PutOp{kPod, "moved", pod_revision}});
    REQUIRE(written.status().code() == Code::kForbidden);
    CHECK(written.status().message() ==
          "identity \"admin\" may not update /registry/pods/default/web in the event log");
  }
  SECTION("binding updates pods but creates none and writes no nodes") {
    auto binding = f.ClientContext("binding");
    client::ApiClient api(*binding, kApi, "binding");
    CHECK(api.Write({PutOp{"/registry/pods/default/new", "x", Revision(0)}}).status().code() == Code::kForbidden);
    CHECK(api.Write({PutOp{"/registry/nodes/n1", "x"}}).status().code() == Code::kForbidden);
    CHECK(api.Write({DeleteOp{kPod}}).status().code() == Code::kForbidden);
    // One forbidden op refuses the whole transaction.
    CHECK(api.Write({PutOp{kPod, "bound", pod_revision}, PutOp{"/registry/nodes/n1", "x"}}).status().code() ==
          Code::kForbidden);
    auto bound = api.Write({PutOp{kPod, "bound", pod_revision}});
    REQUIRE(bound.ok());
    REQUIRE(bound->succeeded);
    CHECK(f.WriterOf(bound->revision) == "binding");
  }
  SECTION("admission creates objects of any kind") {
    auto admission = f.ClientContext("admission");
    client::ApiClient api(*admission, kApi, "admission");
    auto made = api.Write({PutOp{"/registry/services/default/s", "x", Revision(0)}});
    REQUIRE(made.ok());
    CHECK(made->succeeded);
    CHECK(f.WriterOf(made->revision) == "admission");
  }
  SECTION("a client of this process cannot speak as an identity it has no keys for") {
    auto binding = f.ClientContext("binding");
    client::ApiClient api(*binding, kApi, "admission");
    auto written = api.Write({PutOp{"/registry/pods/default/new", "x", Revision(0)}});
    REQUIRE_FALSE(written.ok());
    CHECK(written.status().message().find("no keys for that identity") != std::string::npos);
  }
  auto stored = f.log->Get("/registry/pods/default/new");
  REQUIRE(stored.ok());
  CHECK_FALSE(stored->has_value());
}

// The field WriteRequest.writer is gone from the schema; a client that
// still sends it (built by hand at the field's old slot) is recorded under
// the identity its key proves.
TEST_CASE("forged writes: the writer recorded is the authenticated identity, never the client's word") {
  SecuredLog f;
  auto created = f.log->Put(kPod, "v1");
  REQUIRE(created.ok());
  auto status_ctx = f.ClientContext("status");
  bus::RpcClient rpc(*status_ctx, kApi);

  flatbuffers::FlatBufferBuilder fbb;
  auto key = fbb.CreateString(kPod);
  auto value = fbb.CreateVector(reinterpret_cast<const uint8_t*>("v2"), 2);
  auto op = msg::CreateWriteOp(fbb, msg::WriteOpType::Put, key, value,
                               flatbuffers::Optional<int64_t>(created->revision.value()));
  auto ops = fbb.CreateVector(std::vector<flatbuffers::Offset<msg::WriteOp>>{op});
  auto claimed = fbb.CreateString("binding");
  const auto start = fbb.StartTable();
  fbb.AddOffset(msg::WriteRequest::VT_OPS, ops);
  fbb.AddOffset(msg::WriteRequest::VT_OPS + 2, claimed);  // the retired `writer` field
  const flatbuffers::Offset<msg::WriteRequest> request(fbb.EndTable(start));
  auto reply = rpc.Call(fbb, msg::Body::WriteRequest, request.Union(), 5s);
  REQUIRE(reply.ok());
  const msg::WriteReply* write = reply->envelope().body_as_WriteReply();
  REQUIRE(write != nullptr);
  REQUIRE(write->succeeded());
  CHECK(f.WriterOf(Revision(write->revision())) == "status");
}

TEST_CASE("forged writes: credentials are made per data dir, private, and checked when read") {
  testing::TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  REQUIRE(pipeline::EnsureCredentials(a).ok());
  REQUIRE(pipeline::EnsureCredentials(b).ok());
  auto token_a = pipeline::ReadAdminToken(a);
  auto token_b = pipeline::ReadAdminToken(b);
  REQUIRE(token_a.ok());
  REQUIRE(token_b.ok());
  CHECK(token_a->size() == 64);
  CHECK(*token_a != *token_b);
  CHECK(*token_a != "podflow-admin-token");
  // A second start keeps what the first made.
  REQUIRE(pipeline::EnsureCredentials(a).ok());
  CHECK(*pipeline::ReadAdminToken(a) == *token_a);

  auto mode = [](const std::string& path) {
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    return st.st_mode & 0777;
  };
  CHECK(mode(a + "/admin.token") == 0600);
  CHECK(mode(a + "/pki") == 0700);
  CHECK(mode(a + "/pki/server.key") == 0600);
  CHECK(mode(a + "/pki/identities/binding.key") == 0600);
  CHECK(mode(a + "/run") == 0700);

  SECTION("a secret others may read is refused, naming it") {
    REQUIRE(chmod((a + "/pki/identities/binding.key").c_str(), 0644) == 0);
    auto loaded = pipeline::LoadSecurity(a, {"binding"}, false);
    REQUIRE(loaded.status().code() == Code::kInvalid);
    CHECK(loaded.status().message() == "permissions 0644 for " + a +
                                           "/pki/identities/binding.key are too open: a secret must be "
                                           "readable by its owner only (chmod 600)");
  }
  SECTION("a malformed key is refused, naming the file") {
    std::ofstream(a + "/pki/server.pub") << "not a key\n";
    auto loaded = pipeline::LoadSecurity(a, {"binding"}, false);
    REQUIRE(loaded.status().code() == Code::kInvalid);
    CHECK(loaded.status().message() ==
          a + "/pki/server.pub: not a CURVE key (40 Z85 characters), found 9 characters");
  }
  SECTION("a data dir never started has none, and says how to make them") {
    auto loaded = pipeline::LoadSecurity(dir.path() + "/never", {"admin"}, false);
    REQUIRE(loaded.status().code() == Code::kNotFound);
    CHECK(loaded.status().message().find("start the pipeline once") != std::string::npos);
  }
}

// The tools find the data dir's admin token themselves; the constant the
// default config used to carry is no token at all.
TEST_CASE("forged writes: podflow-publish uses the data dir's admin token; the old constant is refused") {
  e2e::Pipeline p(false);
  p.StartAll();
  const std::string manifest = p.dir() + "/pod.yaml";
  std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata: {name: tokened}\n"
                             "spec: {containers: [{name: a, image: nginx}]}\n";
  const std::string publish = e2e::Pipeline::Program("podflow-publish");
  auto [code, out] = e2e::RunCommand({publish, "-f", manifest, "--config", p.config()}, p.dir());
  INFO(out);
  CHECK(code == 0);
  CHECK(out.find("pod/tokened created") != std::string::npos);
  auto [old_code, old_out] =
      e2e::RunCommand({publish, "-f", manifest, "--config", p.config(), "--token", "podflow-admin-token"}, p.dir());
  INFO(old_out);
  CHECK(old_code != 0);
  CHECK(old_out.find("Unauthorized") != std::string::npos);
}

}  // namespace
}  // namespace podflow
