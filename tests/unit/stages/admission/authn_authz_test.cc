// Token file parsing, authentication and RBAC authorization.
#include <yaml-cpp/yaml.h>

#include "admission_fixture.h"
#include "stages/admission/rbac.h"

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
  SECTION("a trusted bus identity without a token is its user; a token always wins") {
    authn->TrustPeer("node-controller", {"system:serviceaccount:kube-system:node-controller", "", {"system:serviceaccounts"}});
    auto controller = authn->Authenticate("", "node-controller");
    REQUIRE(controller.ok());
    CHECK(controller->name == "system:serviceaccount:kube-system:node-controller");
    CHECK(controller->groups == std::vector<std::string>{"system:serviceaccounts", "system:authenticated"});
    auto with_token = authn->Authenticate("good", "node-controller");
    REQUIRE(with_token.ok());
    CHECK(with_token->name == "alice");
    CHECK(authn->Authenticate("bad", "node-controller").status().message() == "Unauthorized");
    // Any other peer (a stage, the tools' "admin") needs a token.
    CHECK(authn->Authenticate("", "admin").status().message() == "Unauthorized");
    CHECK(authn->Authenticate("", "scheduling").status().message() == "Unauthorized");
    CHECK(authn->Authenticate("", "").status().message() == "Unauthorized");
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

// The RBAC objects of `manifests`, admitted and unpacked as the stage's
// stores hold them.
std::shared_ptr<const RbacPolicy> PolicyOf(const std::string& manifests) {
  auto policy = std::make_shared<RbacPolicy>();
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, manifests);
  REQUIRE_FALSE(reply.failure.has_value());
  for (const AdmissionOutcome& o : reply.results) {
    INFO(o.status.message);
    REQUIRE(o.admitted());
    const std::string_view kind = o.kind->kind;
    if (kind == "Role") policy->roles.push_back(model::Unpack<api::Role>(o.bytes));
    if (kind == "ClusterRole") policy->cluster_roles.push_back(model::Unpack<api::ClusterRole>(o.bytes));
    if (kind == "RoleBinding") policy->role_bindings.push_back(model::Unpack<api::RoleBinding>(o.bytes));
    if (kind == "ClusterRoleBinding") {
      policy->cluster_role_bindings.push_back(model::Unpack<api::ClusterRoleBinding>(o.bytes));
    }
  }
  return policy;
}

constexpr std::string_view kRbacObjects = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [pods/status], verbs: [patch]}
- {apiGroups: [""], resources: [configmaps], resourceNames: [settings], verbs: [get, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-reads-pods, namespace: default}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: Role, name: pod-reader, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: viewers}
subjects: [{kind: Group, name: viewers, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: ClusterRole, name: view, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: robot-edits, namespace: default}
subjects: [{kind: ServiceAccount, name: robot}]
roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}
)";

TEST_CASE("RBAC: an allow and deny matrix per verb, resource, namespace and subject", "[admission][authz]") {
  const std::shared_ptr<const RbacPolicy> policy = PolicyOf(BootstrapRbacManifest() + "---" + std::string(kRbacObjects));
  const Authorizer authz = Authorizer::Rbac([policy] { return policy; });
  const UserInfo alice{"alice", "1", {"system:authenticated"}};
  const UserInfo viewer{"carol", "3", {"viewers", "system:authenticated"}};
  const UserInfo robot{"system:serviceaccount:default:robot", "4", {"system:serviceaccounts", "system:authenticated"}};
  const UserInfo nobody{"mallory", "5", {"system:authenticated"}};
  const UserInfo master{"root", "0", {"system:masters"}};
  const UserInfo node_controller{"system:serviceaccount:kube-system:node-controller", "",
                                 {"system:serviceaccounts", "system:serviceaccounts:kube-system",
                                  "system:authenticated"}};
  const UserInfo rs_controller{"system:serviceaccount:kube-system:replicaset-controller", "",
                               {"system:serviceaccounts", "system:serviceaccounts:kube-system",
                                "system:authenticated"}};
  const UserInfo deploy_controller{"system:serviceaccount:kube-system:deployment-controller", "",
                                   {"system:serviceaccounts", "system:serviceaccounts:kube-system",
                                    "system:authenticated"}};
  struct Case {
    const UserInfo* user;
    RequestAttributes request;
    bool allowed;
  };
  const std::vector<Case> cases = {
      {&alice, {"get", "", "pods", "", "default", "web"}, true},
      {&alice, {"list", "", "pods", "", "default", ""}, true},
      {&alice, {"list", "", "pods", "", "prod", ""}, false},        // a RoleBinding is its namespace's only
      {&alice, {"list", "", "pods", "", "", ""}, false},            // every namespace: the cluster scope
      {&alice, {"delete", "", "pods", "", "default", "web"}, false},
      {&alice, {"patch", "", "pods", "status", "default", "web"}, true},  // pods/status
      {&alice, {"patch", "", "pods", "", "default", "web"}, false},
      {&alice, {"get", "", "configmaps", "", "default", "settings"}, true},  // resourceNames
      {&alice, {"get", "", "configmaps", "", "default", "other"}, false},
      {&alice, {"list", "", "configmaps", "", "default", ""}, false},      // a list names nothing
      {&viewer, {"list", "apps", "deployments", "", "prod", ""}, true},
      {&viewer, {"list", "", "pods", "", "", ""}, true},
      {&viewer, {"get", "", "secrets", "", "default", "token"}, false},    // view does not read secrets
      {&viewer, {"create", "", "pods", "", "default", ""}, false},
      {&viewer, {"get", "apps", "pods", "", "default", "web"}, false},     // the API group counts
      {&robot, {"create", "", "pods", "", "default", ""}, true},
      {&robot, {"get", "", "secrets", "", "default", "token"}, true},
      {&robot, {"create", "", "pods", "", "prod", ""}, false},
      {&robot, {"create", "rbac.authorization.k8s.io", "roles", "", "default", ""}, false},
      {&nobody, {"get", "", "pods", "", "default", "web"}, false},
      {&master, {"delete", "", "nodes", "", "", "node-1"}, true},
      // The bootstrap role of the node lifecycle controller (and taint eviction).
      {&node_controller, {"update", "", "nodes", "status", "", "node-1"}, true},
      {&node_controller, {"update", "", "nodes", "", "", "node-1"}, true},
      {&node_controller, {"update", "", "pods", "status", "default", "web"}, true},
      {&node_controller, {"delete", "", "pods", "", "default", "web"}, true},
      {&node_controller, {"create", "", "events", "", "default", ""}, true},
      {&node_controller, {"create", "", "pods", "", "default", ""}, false},
      // The ReplicaSet controller's: its pods and its ReplicaSets' status,
      // nothing of anything else.
      {&rs_controller, {"create", "", "pods", "", "default", ""}, true},
      {&rs_controller, {"patch", "", "pods", "", "default", "web"}, true},
      {&rs_controller, {"delete", "", "pods", "", "default", "web"}, true},
      {&rs_controller, {"update", "apps", "replicasets", "status", "default", "web"}, true},
      {&rs_controller, {"create", "", "events", "", "default", ""}, true},
      {&rs_controller, {"update", "apps", "deployments", "", "default", "web"}, false},
      {&rs_controller, {"create", "apps", "replicasets", "", "default", ""}, false},
      {&rs_controller, {"update", "", "pods", "status", "default", "web"}, false},
      // The Deployment controller's: its ReplicaSets and its Deployments' status.
      {&deploy_controller, {"create", "apps", "replicasets", "", "default", ""}, true},
      {&deploy_controller, {"update", "apps", "replicasets", "", "default", "web"}, true},
      {&deploy_controller, {"delete", "apps", "replicasets", "", "default", "web"}, true},
      {&deploy_controller, {"update", "apps", "deployments", "status", "default", "web"}, true},
      {&deploy_controller, {"create", "", "pods", "", "default", ""}, false},
      {&deploy_controller, {"delete", "apps", "deployments", "", "default", "web"}, false},
      {&node_controller, {"update", "", "pods", "", "default", "web"}, false},
      {&node_controller, {"get", "", "secrets", "", "kube-system", "token"}, false},
  };
  for (const Case& c : cases) {
    const RequestAttributes& r = c.request;
    SECTION(c.user->name + " " + r.verb + " " + r.api_group + "/" + r.resource + "/" + r.subresource + " " +
            r.name + " in '" + r.namespace_ + "'") {
      CHECK(authz.Allows(*c.user, r) == c.allowed);
    }
  }
  SECTION("AlwaysAllow: every authenticated user may do anything") {
    CHECK(Authorizer().Allows(nobody, {"delete", "", "nodes", "", "", "node-1"}));
  }
}

TEST_CASE("RBAC: a user may grant and bind only what it holds, as kube-apiserver's escalation check",
          "[admission][authz]") {
  const std::shared_ptr<const RbacPolicy> policy = PolicyOf(BootstrapRbacManifest() + "---" + std::string(kRbacObjects));
  const Authorizer authz = Authorizer::Rbac([policy] { return policy; });
  const UserInfo alice{"alice", "1", {"dev", "system:authenticated"}};
  auto packed = [](std::string_view manifest) {
    AdmissionOutcome out = testing::AdmitOne(manifest);
    INFO(out.status.message);
    REQUIRE(out.admitted());
    return out.bytes;
  };
  const std::string reader = packed(
      "{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: r, namespace: default}, rules: "
      "[{apiGroups: [''], resources: [pods], verbs: [get, list]}]}");
  CHECK_FALSE(authz.Escalation(alice, model::Kind("Role"), reader).has_value());
  const std::string deleter = packed(
      "{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: r, namespace: default}, rules: "
      "[{apiGroups: [''], resources: [pods], verbs: [get, delete]}]}");
  CHECK(authz.Escalation(alice, model::Kind("Role"), deleter) ==
        "user \"alice\" (groups=[\"dev\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
        "currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"delete\"]}");
  const std::string bind_admin = packed(
      "{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b, namespace: default}, "
      "subjects: [{kind: User, name: alice}], roleRef: {kind: ClusterRole, name: cluster-admin}}");
  CHECK(authz.Escalation(alice, model::Kind("RoleBinding"), bind_admin).has_value());
  const std::string bind_reader = packed(
      "{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b, namespace: default}, "
      "subjects: [{kind: User, name: bob}], roleRef: {kind: Role, name: pod-reader}}");
  CHECK_FALSE(authz.Escalation(alice, model::Kind("RoleBinding"), bind_reader).has_value());
  // Not RBAC's business: other kinds, and system:masters.
  CHECK_FALSE(authz.Escalation(alice, model::Kind("Pod"), packed(testing::ReadManifest("nginx-pod.yaml"))).has_value());
  CHECK_FALSE(authz.Escalation({"root", "0", {"system:masters"}}, model::Kind("RoleBinding"), bind_admin).has_value());

  SECTION("through admission: a 403 naming the binding") {
    // alice may create RoleBindings here only through a role that allows it.
    const std::shared_ptr<const RbacPolicy> with_create = PolicyOf(
        BootstrapRbacManifest() + "---" + std::string(kRbacObjects) +
        "---\n{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: alice-admin, "
        "namespace: default}, subjects: [{kind: User, name: alice}], roleRef: {kind: ClusterRole, name: admin}}");
    AdmissionConfig config2 = testing::TestConfig();
    config2.authorizer = Authorizer::Rbac([with_create] { return with_create; });
    Admission admin_in_default = testing::TestAdmission(std::move(config2));
    AdmitReply reply = admin_in_default.Admit(
        kAliceToken,
        "{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b, namespace: default}, "
        "subjects: [{kind: User, name: alice}], roleRef: {kind: ClusterRole, name: cluster-admin}}");
    REQUIRE(reply.results.size() == 1);
    CHECK(reply.results[0].status.code == 403);
    CHECK(reply.results[0].status.message.starts_with(
        "rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user \"alice\" (groups=[\"dev\" "
        "\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:"));
  }
}

TEST_CASE("Admit: a denied create is Forbidden, worded as Kubernetes", "[admission][authz]") {
  AdmissionConfig config = testing::TestConfig();
  const std::shared_ptr<const RbacPolicy> policy = PolicyOf(std::string(kRbacObjects));
  config.authorizer = Authorizer::Rbac([policy] { return policy; });
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
  SECTION("a section with tokens, a cluster IP range and an authorization mode") {
    YAML::Node node = YAML::Load(R"(
tokens:
  - {token: podflow-admin-token, user: admin, uid: "1", groups: ["system:masters"]}
serviceClusterIPRange: 10.96.0.0/12
authorizationMode: AlwaysAllow
)");
    auto config = ParseAdmissionConfig(node);
    INFO(config.status().ToString());
    REQUIRE(config.ok());
    auto admin = config->authenticator.Authenticate("podflow-admin-token");
    REQUIRE(admin.ok());
    CHECK(admin->name == "admin");
    CHECK(config->cluster_ips.cidr() == "10.96.0.0/12");
    CHECK(config->authorization_mode == "AlwaysAllow");
    CHECK(ParseAdmissionConfig(YAML::Load("tokens: []"))->authorization_mode == "RBAC");
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
        {"policy: [{user: a, verbs: [get], resources: [pods]}]",
         "admission.policy: replaced by RBAC; store Roles, ClusterRoles and their bindings instead "
         "(config/README.md, Authorization)"},
        {"authorizationMode: Webhook", "admission.authorizationMode: \"Webhook\" is not RBAC or AlwaysAllow"},
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
