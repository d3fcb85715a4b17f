// The entry point: whole-request failures, per-document outcomes, keys and
// bytes, determinism.
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

TEST_CASE("Admit: whole-request failures", "[admission]") {
  Admission admission = testing::TestAdmission();
  SECTION("not YAML: BadRequest") {
    AdmitReply reply = admission.Admit(testing::kAdminToken, "kind: [Pod\n");
    REQUIRE(reply.failure.has_value());
    CHECK(reply.failure->code == 400);
    CHECK(reply.failure->reason == "BadRequest");
    CHECK(reply.failure->message.starts_with("error parsing manifest: line "));
  }
  SECTION("no documents") {
    AdmitReply reply = admission.Admit(testing::kAdminToken, "---\n");
    REQUIRE(reply.failure.has_value());
    CHECK(reply.failure->message == "no objects passed to create");
  }
  SECTION("authentication comes first") {
    AdmitReply reply = admission.Admit("", "kind: [Pod\n");
    REQUIRE(reply.failure.has_value());
    CHECK(reply.failure->code == 401);
  }
}

TEST_CASE("Admit: undecodable documents", "[admission]") {
  struct Case {
    std::string name;
    std::string manifest;
    int32_t code;
    std::string kubectl;
  };
  const std::vector<Case> cases = {
      {"unknown kind", "{apiVersion: v1, kind: Pdo, metadata: {name: x}}", 400,
       "Error from server (BadRequest): no matches for kind \"Pdo\" in version \"v1\""},
      {"no kind", "{apiVersion: v1, metadata: {name: x}}", 400,
       "Error from server (BadRequest): error validating data: [kind not set]"},
      {"unknown field",
       "{apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: a, image: "
       "nginx, "
       "imagePullPolcy: Always}]}}",
       400,
       "Error from server (BadRequest): Pod in version \"v1\" cannot be handled as a Pod: strict "
       "decoding error: unknown field \"spec.containers[0].imagePullPolcy\""},
      {"unsupported enum value (the codec's closed-set check)",
       "{apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {restartPolicy: Sometimes, "
       "containers: [{name: a, image: nginx}]}}",
       422, ""},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      AdmissionOutcome out = testing::AdmitOne(c.manifest);
      CHECK_FALSE(out.admitted());
      CHECK(out.bytes.empty());
      CHECK(out.status.code == c.code);
      if (!c.kubectl.empty()) CHECK(KubectlMessage(out.status) == c.kubectl);
      if (c.code == 422) {
        REQUIRE(out.status.details.causes.size() == 1);
        CHECK(out.status.details.causes[0].field == "spec.restartPolicy");
        CHECK(out.status.details.causes[0].Reason() == "FieldValueNotSupported");
        CHECK(out.status.message.starts_with(
            "Pod \"x\" is invalid: spec.restartPolicy: Unsupported value: \"Sometimes\""));
      }
    }
  }
}

TEST_CASE("Admit: documents are admitted one by one", "[admission]") {
  Admission admission = testing::TestAdmission();
  std::string manifest = testing::ReadManifest("nginx-pod.yaml") + "\n---\n" +
                         "{apiVersion: v1, kind: Pod, metadata: {name: bad}, spec: {containers: "
                         "[{name: a}]}}\n---\n" +
                         testing::ReadManifest("namespace.yaml");
  AdmitReply reply = admission.Admit(testing::kAdminToken, manifest);
  REQUIRE_FALSE(reply.failure.has_value());
  REQUIRE(reply.results.size() == 3);
  CHECK(reply.results[0].admitted());
  CHECK(reply.results[0].kind == &model::Kind("Pod"));
  CHECK(reply.results[0].key == "/registry/pods/default/nginx-pod");
  CHECK_FALSE(reply.results[1].admitted());
  CHECK(reply.results[1].name == "bad");
  CHECK(reply.results[1].namespace_ == "default");
  CHECK(reply.results[1].key.empty());
  CHECK(KubectlMessage(reply.results[1].status) ==
        "Error from server (Invalid): Pod \"bad\" is invalid: spec.containers[0].image: Required "
        "value");
  CHECK(reply.results[2].admitted());
  CHECK(reply.results[2].namespace_.empty());
  CHECK(reply.results[2].key.starts_with("/registry/namespaces/"));
  SECTION("each object gets its own uid") {
    auto a = testing::AdmittedObject<api::Pod>(reply.results[0]);
    auto ns = testing::AdmittedObject<api::Namespace>(reply.results[2]);
    CHECK(a->metadata->uid != ns->metadata->uid);
  }
  SECTION("the bytes verify as their kind") {
    CHECK(model::VerifyObject(model::Kind("Pod"), reply.results[0].bytes).ok());
  }
}

TEST_CASE("Admit: the same seed and clock give the same bytes", "[admission]") {
  std::string manifest = testing::ReadManifest("nginx-pod.yaml");
  Admission a = testing::TestAdmission();
  Admission b = testing::TestAdmission();
  AdmitReply ra = a.Admit(testing::kAdminToken, manifest);
  AdmitReply rb = b.Admit(testing::kAdminToken, manifest);
  REQUIRE(ra.results.size() == 1);
  REQUIRE(rb.results.size() == 1);
  CHECK(ra.results[0].bytes == rb.results[0].bytes);
  AdmitReply again = a.Admit(testing::kAdminToken, manifest);
  CHECK(again.results[0].bytes != ra.results[0].bytes);  // a fresh uid
}

TEST_CASE("Admit: a failed must-not-exist guard becomes AlreadyExists", "[admission]") {
  AdmissionOutcome out = testing::AdmitOne(testing::ReadManifest("nginx-pod.yaml"));
  REQUIRE(out.admitted());
  // What the caller does when persistence reports the key exists:
  out.status = AlreadyExistsStatus(*out.kind, out.name);
  CHECK(KubectlMessage(out.status) ==
        "Error from server (AlreadyExists): pods \"nginx-pod\" already exists");
  CHECK(out.status.details.kind == "pods");
  CHECK(out.status.details.name == "nginx-pod");
}

}  // namespace
}  // namespace podflow::admission
