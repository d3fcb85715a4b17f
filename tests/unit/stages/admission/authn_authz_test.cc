// Token file parsing, authentication and the authorization policy.
#include <yaml-cpp/yaml.h>

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

using testing::kAdminToken;
using testing::kAliceToken;

TEST_CASE("token file: good files", "[admission][authn]") {
  struct Case {
    std::string name;
    std::string text;
    std::vector<TokenEntry> want;
  };
  const std::vector<Case> cases = {
      {"three columns", "t1,alice,1\n", {{"t1", {"alice", "1", {}}}}},
      {"quoted groups", "t1,alice,1,\"dev,ops\"\n", {{"t1", {"alice", "1", {"dev", "ops"}}}}},
      {"one group unquoted", "t1,alice,1,dev", {{"t1", {"alice", "1", {"dev"}}}}},
      {"blank and comment lines",
       "# tokens\n\nt1,alice,1\n  \nt2,bob,2\n",
       {{"t1", {"alice", "1", {}}}, {"t2", {"bob", "2", {}}}}},
      {"spaces after commas, CRLF",
       "t1, alice, 1, \"a, b\"\r\n",
       {{"t1", {"alice", "1", {"a", "b"}}}}},
      {"escaped quote", "t1,\"al\"\"ice\",1\n", {{"t1", {"al\"ice", "1", {}}}}},
      {"extra columns ignored", "t1,alice,1,dev,extra\n", {{"t1", {"alice", "1", {"dev"}}}}},
      {"empty file", "", {}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto got = ParseTokenFile(c.text);
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      REQUIRE(got->size() == c.want.size());
      for (size_t i = 0; i < c.want.size(); ++i) {
        CHECK((*got)[i].token == c.want[i].token);
        CHECK((*got)[i].user.name == c.want[i].user.name);
        CHECK((*got)[i].user.uid == c.want[i].user.uid);
        CHECK((*got)[i].user.groups == c.want[i].user.groups);
      }
    }
  }
}

TEST_CASE("token file: bad lines name the line", "[admission][authn]") {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"t1,alice\n",
       "token file line 1: must have at least 3 columns (token, user name, user uid), found 2"},
      {"# c\nt1,alice,1\nt2\n",
       "token file line 3: must have at least 3 columns (token, user name, user uid), found 1"},
      {",alice,1\n", "token file line 1: empty token"},
      {"t1,,1\n", "token file line 1: empty user name"},
      {"t1,alice,1\nt1,bob,2\n", "token file line 2: duplicate token (first on line 1)"},
      {"t1,alice,1,\"dev\n", "token file line 1: unterminated quoted field"},
      {"t1,al\"ice,1\n", "token file line 1: bare \" in a non-quoted field"},
  };
  for (const Case& c : cases) {
    SECTION(c.error) {
      auto got = ParseTokenFile(c.text);
      REQUIRE_FALSE(got.ok());
      CHECK(got.status().message() == c.error);
    }
  }
}

TEST_CASE("authentication outcomes", "[admission][authn]") {
  auto authn = TokenAuthenticator::Create(*ParseTokenFile("good,alice,7,\"dev,ops\"\n"));
  REQUIRE(authn.ok());
  SECTION("known token: the user, with system:authenticated") {
    auto user = authn->Authenticate("good");
    REQUIRE(user.ok());
    CHECK(user->name == "alice");
    CHECK(user->uid == "7");
    CHECK(user->groups == std::vector<std::string>{"dev", "ops", "system:authenticated"});
  }
  for (std::string_view token : {"", "bad", "goo", "good "}) {
    SECTION("rejected: '" + std::string(token) + "'") {
      auto user = authn->Authenticate(token);
      REQUIRE_FALSE(user.ok());
      CHECK(user.status().message() == "Unauthorized");
    }
  }
  SECTION("no tokens configured: everything is rejected") {
    CHECK_FALSE(TokenAuthenticator().Authenticate("good").ok());
  }
  SECTION("Admit: a bad token fails the whole request with 401") {
    Admission admission = testing::TestAdmission();
    AdmitReply reply = admission.Admit("wrong", testing::ReadManifest("nginx-pod.yaml"));
    REQUIRE(reply.failure.has_value());
    CHECK(reply.results.empty());
    CHECK(reply.failure->code == 401);
    CHECK(reply.failure->reason == "Unauthorized");
    CHECK(reply.failure->message == "Unauthorized");
    CHECK(KubectlMessage(*reply.failure) ==
          "error: You must be logged in to the server (Unauthorized)");
  }
}

TEST_CASE("authorization: allow and deny", "[admission][authz]") {
  auto authz = Authorizer::Create({
      {"alice", "", {"create", "get"}, {"default"}, {"pods"}},
      {"", "viewers", {"get", "list", "watch"}, {"*"}, {"*"}},
      {"bob", "", {"*"}, {"*"}, {"nodes", "svc"}},
  });
  REQUIRE(authz.ok());
  const UserInfo alice{"alice", "1", {"system:authenticated"}};
  const UserInfo bob{"bob", "2", {"system:authenticated"}};
  const UserInfo viewer{"carol", "3", {"viewers", "system:authenticated"}};
  const UserInfo master{"root", "0", {"system:masters"}};
  struct Case {
    const UserInfo* user;
    std::string verb, resource, namespace_;
    bool allowed;
  };
  const std::vector<Case> cases = {
      {&alice, "create", "pods", "default", true},
      {&alice, "create", "pods", "prod", false},
      {&alice, "delete", "pods", "default", false},
      {&alice, "create", "services", "default", false},
      {&viewer, "list", "pods", "prod", true},
      {&viewer, "watch", "nodes", "", true},
      {&viewer, "create", "pods", "default", false},
      {&bob, "create", "nodes", "", true},
      {&bob, "delete", "services", "prod", true},  // "svc" means services
      {&bob, "create", "pods", "default", false},
      {&master, "delete", "nodes", "", true},
  };
  for (const Case& c : cases) {
    SECTION(c.user->name + " " + c.verb + " " + c.resource + " in '" + c.namespace_ + "'") {
      CHECK(authz->Allows(*c.user, c.verb, c.resource, c.namespace_) == c.allowed);
    }
  }
  SECTION("a rule for some namespaces does not cover cluster-scoped kinds") {
    auto only_default = Authorizer::Create({{"alice", "", {"*"}, {"default"}, {"*"}}});
    REQUIRE(only_default.ok());
    CHECK_FALSE(only_default->Allows(alice, "create", "nodes", ""));
    CHECK(only_default->Allows(alice, "create", "pods", "default"));
  }
  SECTION("no policy: every authenticated user may do anything") {
    CHECK(Authorizer().Allows(alice, "delete", "nodes", ""));
  }
}

TEST_CASE("authorization: bad policies", "[admission][authz]") {
  struct Case {
    PolicyRule rule;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"", "", {"get"}, {}, {"pods"}}, "policy rule 0: set exactly one of user and group"},
      {{"a", "g", {"get"}, {}, {"pods"}}, "policy rule 0: set exactly one of user and group"},
      {{"a", "", {}, {}, {"pods"}}, "policy rule 0: verbs is empty"},
      {{"a", "", {"run"}, {}, {"pods"}},
       "policy rule 0: unknown verb \"run\" (create, get, list, watch, update, patch, delete, *)"},
      {{"a", "", {"get"}, {}, {}}, "policy rule 0: resources is empty"},
      {{"a", "", {"get"}, {}, {"widgets"}}, "policy rule 0: unknown resource \"widgets\""},
  };
  for (const Case& c : cases) {
    SECTION(c.error) {
      auto got = Authorizer::Create({c.rule});
      REQUIRE_FALSE(got.ok());
      CHECK(got.status().message() == c.error);
    }
  }
}

TEST_CASE("Admit: a denied create is Forbidden, worded as Kubernetes", "[admission][authz]") {
  AdmissionConfig config = testing::TestConfig();
  config.authorizer = *Authorizer::Create({{"alice", "", {"get"}, {"*"}, {"*"}}});
  Admission admission = testing::TestAdmission(std::move(config));
  SECTION("namespaced") {
    AdmitReply reply = admission.Admit(kAliceToken, testing::ReadManifest("nginx-pod.yaml"));
    REQUIRE(reply.results.size() == 1);
    const ApiStatusInfo& s = reply.results[0].status;
    CHECK(s.code == 403);
    CHECK(s.reason == "Forbidden");
    CHECK(s.message ==
          "pods is forbidden: User \"alice\" cannot create resource \"pods\" in API group \"\" in "
          "the namespace \"default\"");
    CHECK(s.details.kind == "pods");
    CHECK(KubectlMessage(s) ==
          "Error from server (Forbidden): pods is forbidden: User \"alice\" cannot create resource "
          "\"pods\" in API group \"\" in the namespace \"default\"");
  }
  SECTION("cluster-scoped") {
    AdmitReply reply = admission.Admit(kAliceToken, testing::ReadManifest("node-kwok.yaml"));
    REQUIRE_FALSE(reply.results.empty());
    CHECK(
        reply.results[0].status.message ==
        "nodes is forbidden: User \"alice\" cannot create resource \"nodes\" in API group \"\" at "
        "the cluster scope");
  }
  SECTION("system:masters is never denied") {
    AdmitReply reply = admission.Admit(kAdminToken, testing::ReadManifest("nginx-pod.yaml"));
    REQUIRE(reply.results.size() == 1);
    CHECK(reply.results[0].admitted());
  }
}

TEST_CASE("admission config from YAML", "[admission][config]") {
  SECTION("a section with tokens, a cluster IP range and a policy") {
    YAML::Node node = YAML::Load(R"(
tokens:
  - {token: podflow-admin-token, user: admin, uid: "1", groups: ["system:masters"]}
serviceClusterIPRange: 10.96.0.0/12
policy:
  - {user: alice, verbs: [create], namespaces: [default], resources: [pods]}
)");
    auto config = ParseAdmissionConfig(node);
    INFO(config.status().ToString());
    REQUIRE(config.ok());
    auto admin = config->authenticator.Authenticate("podflow-admin-token");
    REQUIRE(admin.ok());
    CHECK(admin->name == "admin");
    CHECK(config->cluster_ips.cidr() == "10.96.0.0/12");
    CHECK(config->authorizer.Allows({"alice", "", {}}, "create", "pods", "default"));
    CHECK_FALSE(config->authorizer.Allows({"alice", "", {}}, "create", "pods", "prod"));
  }
  SECTION("errors") {
    struct Case {
      std::string yaml;
      std::string error;
    };
    const std::vector<Case> cases = {
        {"tokenz: []", "admission: unknown key \"tokenz\""},
        {"serviceClusterIPRange: 10.96.0.0",
         "admission.serviceClusterIPRange: service cluster IP range \"10.96.0.0\": not a CIDR "
         "(e.g. "
         "10.96.0.0/12)"},
        {"policy: [{user: a, verbs: [fly], resources: [pods]}]",
         "admission.policy rule 0: unknown verb \"fly\" (create, get, list, watch, update, patch, "
         "delete, *)"},
        {"tokenFile: /nonexistent/tokens.csv", "cannot read token file /nonexistent/tokens.csv"},
    };
    for (const Case& c : cases) {
      SECTION(c.error) {
        auto config = ParseAdmissionConfig(YAML::Load(c.yaml));
        REQUIRE_FALSE(config.ok());
        CHECK(config.status().message() == c.error);
      }
    }
  }
}

}  // namespace
}  // namespace podflow::admission
