// Manifests that exhausted memory or confused the decoder:
//  - a 619-byte YAML alias bomb (9 nested anchor levels, 10 aliases each)
//    drove admission past 6 GB: aliases were expanded without bound;
//  - a request over kube-apiserver's 3 MiB limit came back as 500
//    InternalError from the log instead of 413 before any decoding;
//  - annotations over 256 KiB in total were accepted;
//  - 10,000-level nesting was reported as "line 1, column 1: bad file";
//  - invalid UTF-8 in a JSON manifest was stored raw (and printed later as
//    invalid JSON);
//  - a NUL byte in a name cut the error message at the NUL;
//  - a valid pod whose status could never be stored (3,000 containers) was
//    admitted and then stuck in ContainerCreating forever.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "admission_fixture.h"
#include "log/log.h"
#include "model/codec.h"
#include "model/value.h"
#include "model/objects.h"

namespace podflow::admission {
namespace {

using testing::kAdminToken;
using testing::TestAdmission;

std::string AliasBomb() {
  std::string text = "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int level = 1; level <= 9; ++level) {
    std::string prev = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? "," : "") + prev;
    text += "]\n";
  }
  return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n" + text;
}

ApiStatusInfo WholeRequestFailure(std::string_view manifest) {
  Admission admission = TestAdmission();
  AdmitReply reply = admission.Admit(kAdminToken, manifest);
  REQUIRE(reply.failure.has_value());
  return *reply.failure;
}

TEST_CASE("manifest limits: an alias bomb is refused while decoding, not expanded") {
  const std::string bomb = AliasBomb();
  REQUIRE(bomb.size() < 1024);
  const auto start = std::chrono::steady_clock::now();
  ApiStatusInfo failure = WholeRequestFailure(bomb);
  CHECK(failure.code == 400);
  CHECK(failure.reason == "BadRequest");
  CHECK(failure.message.find("error parsing manifest: line ") == 0);
  CHECK(failure.message.find("document contains excessive aliasing") != std::string::npos);
  // Refused after a bounded amount of work: the full expansion is 10^10
  // nodes. (Not a timing assertion: a generous bound against a hang.)
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));

  // Aliases of long strings, also as keys: bounded by the text they expand to.
  std::string keys = "a: &k \"" + std::string(1 << 20, 'x') + "\"\nb: {";
  for (int i = 0; i < 200; ++i) keys += "*k : " + std::to_string(i) + ", ";
  keys += "z: 1}\n";
  auto by_keys = model::DecodeManifests(keys);
  REQUIRE_FALSE(by_keys.ok());
  CHECK(by_keys.status().message().find("exceeded max size of 67108864 bytes of text") != std::string::npos);
  // Nested anchors copy what they anchor: that counts too.
  std::string nested;
  for (int i = 0; i < 150; ++i) nested += "&a" + std::to_string(i) + " [";
  for (int i = 0; i < 20000; ++i) nested += i ? ",1" : "1";
  nested += std::string(150, ']') + "\n";
  auto by_nesting = model::DecodeManifests("x: " + nested);
  REQUIRE_FALSE(by_nesting.ok());
  CHECK(by_nesting.status().message().find("exceeded max number of nodes") != std::string::npos);

  // Anchors on keys, and aliases of numbers as keys, read as before.
  auto keyed = model::ParseYaml("a: {&k app: web}\nb: {*k : x}\nc: &p 8080\nd: {*p : http}\n");
  REQUIRE(keyed.ok());
  REQUIRE(keyed->size() == 1);
  CHECK(model::ToJson((*keyed)[0]) == R"({"a":{"app":"web"},"b":{"app":"x"},"c":8080,"d":{"8080":"http"}})");

  // A few aliases, as real manifests use them, still expand.
  auto fine = model::DecodeManifests(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: &l {app: web}}\n"
      "spec:\n  nodeSelector: *l\n  containers: [{name: c, image: nginx}]\n");
  REQUIRE(fine.ok());
  REQUIRE(fine->size() == 1);
  CHECK((*fine)[0].status.ok());
}

TEST_CASE("manifest limits: nesting too deep says so, and where") {
  std::string deep = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: " +
                     std::string(10000, '[') + std::string(10000, ']') + "\n";
  ApiStatusInfo failure = WholeRequestFailure(deep);
  CHECK(failure.code == 400);
  INFO(failure.message);
  CHECK(failure.message.find("bad file") == std::string::npos);
  CHECK(failure.message.find("error parsing manifest: line 4, column ") == 0);
  CHECK(failure.message.find("exceeded max depth of 200") != std::string::npos);

  std::string block;
  for (int i = 0; i < 300; ++i) block += std::string(static_cast<size_t>(i), ' ') + "k:\n";
  auto blocked = model::DecodeManifests(block);
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.status().message().find("exceeded max depth of 200") != std::string::npos);
}

TEST_CASE("manifest limits: a request over 3 MiB is 413 before decoding") {
  // Not even YAML: the size is checked before the decoder sees it.
  std::string huge(Admission::kMaxRequestBytes + 1, '{');
  ApiStatusInfo failure = WholeRequestFailure(huge);
  CHECK(failure.code == 413);
  CHECK(failure.reason == "RequestEntityTooLarge");
  CHECK(failure.message == "Request entity too large: limit is 3145728");
  CHECK(model::KubectlMessage(failure, "big.yaml") ==
        "Error from server (RequestEntityTooLarge): error when creating \"big.yaml\": "
        "Request entity too large: limit is 3145728");
}

TEST_CASE("manifest limits: annotations over 256 KiB in total are Invalid") {
  auto pod = [](size_t bytes) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    a: \"" +
           std::string(bytes / 2, 'x') + "\"\n    b: \"" + std::string(bytes - bytes / 2 - 2, 'y') +
           "\"\nspec:\n  containers: [{name: c, image: nginx}]\n";
  };
  CHECK(testing::AdmitOne(pod(256 * 1024)).admitted());
  AdmissionOutcome over = testing::AdmitOne(pod(256 * 1024 + 1));
  REQUIRE_FALSE(over.admitted());
  CHECK(over.status.code == 422);
  CHECK(over.status.message ==
        "Pod \"p\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes");
}

TEST_CASE("manifest limits: invalid UTF-8 is refused with where it is") {
  std::string json = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"c\"},\n"
                     " \"data\": {\"k\": \"ab\xff\xfe\"}}";
  ApiStatusInfo failure = WholeRequestFailure(json);
  CHECK(failure.code == 400);
  CHECK(failure.message == "error parsing manifest: line 3, column 19: invalid UTF-8 (byte 0xff)");
  // Overlong forms and surrogates are not UTF-8 either; real text is.
  CHECK_FALSE(model::DecodeManifests("a: \"\xc0\xaf\"").ok());
  CHECK_FALSE(model::DecodeManifests("a: \"\xed\xa0\x80\"").ok());
  CHECK(model::DecodeManifests("a: \"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x90\xb3\"").ok());
}

TEST_CASE("manifest limits: a NUL byte in a name does not cut the message") {
  std::string manifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: \"bad\\0name\"}\n"
                         "spec:\n  containers: [{name: c, image: nginx}]\n";
  AdmissionOutcome out = testing::AdmitOne(manifest);
  REQUIRE_FALSE(out.admitted());
  INFO(out.status.message);
  CHECK(out.status.message.find('\0') == std::string::npos);
  CHECK(out.status.message.find("Pod \"bad\\x00name\" is invalid: metadata.name: Invalid value: "
                                "\"bad\\x00name\": ") == 0);
}

TEST_CASE("manifest limits: a pod whose status could never be stored is refused at admission") {
  // The limit admission plans for is the log's own.
  CHECK(LogOptions{}.max_txn_bytes == model::kMaxWriteBytes);
  auto pod = [](int containers) {
    std::string text = "apiVersion: v1\nkind: Pod\nmetadata: {name: wide}\nspec:\n  containers:\n";
    for (int i = 0; i < containers; ++i) {
      text += "  - {name: c" + std::to_string(i) + ", image: \"registry.example.com/team/app:1.0\"}\n";
    }
    return text;
  };
  // The pod alone is about 0.3 MB, well under the limit; with the status
  // each container will have, it is not.
  AdmissionOutcome wide = testing::AdmitOne(pod(3000));
  REQUIRE_FALSE(wide.admitted());
  CHECK(wide.status.code == 413);
  CHECK(wide.status.reason == "RequestEntityTooLarge");
  INFO(wide.status.message);
  CHECK(wide.status.message.find("Pod \"wide\" is too large to store: about ") == 0);
  CHECK(wide.status.message.find("bytes with its status, over the limit of 1572864 bytes per write") !=
        std::string::npos);
  // A large but storable pod still goes in.
  CHECK(testing::AdmitOne(pod(300)).admitted());
}

}  // namespace
}  // namespace podflow::admission
