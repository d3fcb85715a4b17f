// API statuses and field errors: construction, the msg::ApiStatus wire
// form, kubectl's lines.
#include "model/api_status.h"

#include <catch2/catch.hpp>

#include "messages_generated.h"
#include "model/objects.h"

namespace podflow::model {
namespace {

const model::KindInfo& Pod() { return model::Kind("Pod"); }

TEST_CASE("statuses print as kubectl prints them", "[admission][status]") {
  struct Case {
    std::string name;
    ApiStatusInfo status;
    int32_t code;
    std::string reason;
    std::string kubectl;
  };
  const std::vector<Case> cases = {
      {"created", CreatedStatus(Pod(), "nginx-pod"), 201, "", "pod/nginx-pod created"},
      {"created, group kind", CreatedStatus(model::Kind("PriorityClass"), "high"), 201, "",
       "priorityclass.scheduling.k8s.io/high created"},
      {"already exists", AlreadyExistsStatus(Pod(), "nginx-pod"), 409, "AlreadyExists",
       "Error from server (AlreadyExists): pods \"nginx-pod\" already exists"},
      {"invalid, one cause",
       InvalidStatus(Pod(), "x", {FieldError::Required("spec.containers[0].image")}), 422, "Invalid",
       "Error from server (Invalid): Pod \"x\" is invalid: spec.containers[0].image: Required "
       "value"},
      {"invalid, two causes",
       InvalidStatus(Pod(), "x",
                     {FieldError::Required("spec.containers[0].image"),
                      FieldError::Duplicate("spec.containers[1].name", "app")}),
       422, "Invalid",
       "Error from server (Invalid): Pod \"x\" is invalid: [spec.containers[0].image: Required "
       "value, spec.containers[1].name: Duplicate value: \"app\"]"},
      {"unauthorized", UnauthorizedStatus(), 401, "Unauthorized",
       "error: You must be logged in to the server (Unauthorized)"},
      {"bad request", BadRequestStatus("no matches for kind \"Pdo\" in version \"v1\""), 400,
       "BadRequest",
       "Error from server (BadRequest): no matches for kind \"Pdo\" in version \"v1\""},
      {"internal", InternalErrorStatus("failed to allocate a serviceIP: range is full"), 500,
       "InternalError",
       "Error from server (InternalError): Internal error occurred: failed to allocate a "
       "serviceIP: "
       "range is full"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      CHECK(c.status.code == c.code);
      CHECK(c.status.reason == c.reason);
      CHECK(c.status.status == (c.code == 201 ? "Success" : "Failure"));
      CHECK(KubectlMessage(c.status) == c.kubectl);
    }
  }
  SECTION("with the file name, as kubectl apply -f prints") {
    CHECK(KubectlMessage(AlreadyExistsStatus(Pod(), "nginx-pod"), "nginx-pod.yaml") ==
          "Error from server (AlreadyExists): error when creating \"nginx-pod.yaml\": pods "
          "\"nginx-pod\" already exists");
  }
}

TEST_CASE("cause reasons and bodies", "[admission][status]") {
  struct Case {
    FieldError cause;
    std::string reason;
    std::string text;
  };
  const std::vector<Case> cases = {
      {FieldError::Required("metadata.name", "name or generateName is required"), "FieldValueRequired",
       "metadata.name: Required value: name or generateName is required"},
      {FieldError::Invalid("metadata.name", "A", "bad"), "FieldValueInvalid",
       "metadata.name: Invalid value: \"A\": bad"},
      {FieldError::InvalidInt("spec.containers[0].ports[0].containerPort", 0,
                         "must be between 1 and 65535, inclusive"),
       "FieldValueInvalid",
       "spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, "
       "inclusive"},
      {FieldError::Duplicate("spec.containers[1].name", "app"), "FieldValueDuplicate",
       "spec.containers[1].name: Duplicate value: \"app\""},
      {FieldError::NotSupported("spec.restartPolicy", "Sometimes", {"Always", "Never"}),
       "FieldValueNotSupported",
       "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", "
       "\"Never\""},
      {FieldError::TooLong("metadata.annotations", 262144), "FieldValueTooLong",
       "metadata.annotations: Too long: may not be more than 262144 bytes"},
      {FieldError::Forbidden("spec.ports[0].nodePort", "may not be used when `type` is 'ClusterIP'"),
       "FieldValueForbidden",
       "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"},
  };
  for (const Case& c : cases) {
    SECTION(c.text) {
      CHECK(c.cause.Reason() == c.reason);
      CHECK(c.cause.ToString() == c.text);
    }
  }
  SECTION("from the codec's field errors") {
    FieldError c = FieldError::FromCodec(FieldError::Type::kRequired, "spec.containers", "", "");
    CHECK(c.type == FieldError::Type::kRequired);
    CHECK(c.field == "spec.containers");
    CHECK(c.message == "Required value");
  }
}

TEST_CASE("statuses round-trip through msg::ApiStatus", "[admission][status]") {
  ApiStatusInfo in = InvalidStatus(Pod(), "x",
                                   {FieldError::Required("spec.containers[0].image"),
                                    FieldError::Duplicate("spec.containers[1].name", "app")});
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(WriteApiStatus(fbb, in));
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  REQUIRE(verifier.VerifyBuffer<msg::ApiStatus>(nullptr));
  const msg::ApiStatus* wire = flatbuffers::GetRoot<msg::ApiStatus>(fbb.GetBufferPointer());
  CHECK(wire->code() == 422);
  CHECK(wire->details()->causes()->Get(1)->reason()->str() == "FieldValueDuplicate");
  CHECK(wire->details()->causes()->Get(1)->message()->str() == "Duplicate value: \"app\"");
  CHECK(wire->details()->causes()->Get(1)->field()->str() == "spec.containers[1].name");

  ApiStatusInfo out = ReadApiStatus(*wire);
  CHECK(out.status == "Failure");
  CHECK(out.reason == "Invalid");
  CHECK(out.message == in.message);
  CHECK(out.details.name == "x");
  CHECK(out.details.kind == "Pod");
  REQUIRE(out.details.causes.size() == 2);
  CHECK(out.details.causes[1].type == FieldError::Type::kDuplicate);
  CHECK(out.details.causes[1].ToString() == "spec.containers[1].name: Duplicate value: \"app\"");
}

}  // namespace
}  // namespace podflow::model
