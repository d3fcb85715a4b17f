// Security: CURVE keys, the ZAP handler that admits peers by public key,
// and the per-socket settings that make a channel authenticated.
#include <array>
#include <cstdio>
#include <random>

#include "bus/zmq_internal.h"

namespace podflow::bus {
namespace {

// ZeroMQ's fixed address for the handler of its ZAP handshakes (RFC 27).
constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
// The domain every secured socket of podflow asks ZAP about.
constexpr const char* kZapDomain = "podflow";
constexpr size_t kKeyBytes = 32;
constexpr size_t kZ85KeyChars = 40;

std::string Z85(const uint8_t* key) {
  std::array<char, kZ85KeyChars + 1> text{};
  if (zmq_z85_encode(text.data(), key, kKeyBytes) == nullptr) return {};
  return std::string(text.data(), kZ85KeyChars);
}

zmq::message_t Text(std::string_view text) { return zmq::message_t(text.data(), text.size()); }

// Answers one ZAP request (RFC 27): a known CURVE public key is admitted as
// the identity it maps to (ZeroMQ then hands that to every message as
// "User-Id"), anything else is refused.
void AnswerZap(zmq::socket_t& socket, const Security& security, std::vector<zmq::message_t>& request) {
  // version, request id, domain, address, routing id, mechanism, credentials...
  std::string request_id = request.size() > 1 ? request[1].to_string() : "";
  std::string status = "400", text = "malformed ZAP request", user;
  if (request.size() >= 6 && request[0].to_string_view() == "1.0") {
    const std::string address = request[3].to_string();
    const std::string_view mechanism = request[5].to_string_view();
    if (mechanism != "CURVE" || request.size() != 7 || request[6].size() != kKeyBytes) {
      text = "mechanism " + std::string(mechanism) + " is not accepted";
    } else {
      const std::string key = Z85(static_cast<const uint8_t*>(request[6].data()));
      auto it = security.peers.find(key);
      if (it != security.peers.end()) {
        status = "200";
        text = "OK";
        user = it->second;
      } else {
        text = "unknown key " + key;
      }
    }
    if (status != "200") BusLog()->warn("refused a peer at {}: {}", address.empty() ? "?" : address, text);
  } else {
    BusLog()->warn("a malformed ZAP request of {} parts", request.size());
  }
  try {
    socket.send(Text("1.0"), zmq::send_flags::sndmore);
    socket.send(Text(request_id), zmq::send_flags::sndmore);
    socket.send(Text(status), zmq::send_flags::sndmore);
    socket.send(Text(text), zmq::send_flags::sndmore);
    socket.send(Text(user), zmq::send_flags::sndmore);
    socket.send(zmq::message_t(), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    BusLog()->warn("answering ZAP: {}", e.what());
  }
}

}  // namespace

Result<CurveKeys> GenerateCurveKeys() {
  std::array<char, kZ85KeyChars + 1> public_key{}, secret_key{};
  if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0) {
    return Status::Internal(std::string("cannot generate CURVE keys: ") + zmq_strerror(zmq_errno()));
  }
  return CurveKeys{std::string(public_key.data(), kZ85KeyChars), std::string(secret_key.data(), kZ85KeyChars)};
}

Status CheckCurveKey(std::string_view z85, const std::string& what) {
  std::array<uint8_t, kKeyBytes> bytes{};
  const std::string text(z85);
  if (text.size() != kZ85KeyChars || zmq_z85_decode(bytes.data(), text.c_str()) == nullptr) {
    return Status::Invalid(what + ": not a CURVE key (40 Z85 characters), found " +
                           (text.size() == kZ85KeyChars ? std::string("40 characters that are not all Z85")
                                                        : std::to_string(text.size()) + " characters"));
  }
  return Status::Ok();
}

Context::Impl::~Impl() {
  stopping = true;
  if (zap.joinable()) zap.join();
}

Status Context::Secure(Security security) {
  if (!security.server.public_key.empty() || !security.server.secret_key.empty()) {
    PODFLOW_RETURN_IF_ERROR(CheckCurveKey(security.server.public_key, "the server's public key"));
  }
  if (!security.server.secret_key.empty()) {
    PODFLOW_RETURN_IF_ERROR(CheckCurveKey(security.server.secret_key, "the server's secret key"));
  }
  for (const auto& [name, keys] : security.identities) {
    PODFLOW_RETURN_IF_ERROR(CheckCurveKey(keys.public_key, "the public key of " + name));
    PODFLOW_RETURN_IF_ERROR(CheckCurveKey(keys.secret_key, "the secret key of " + name));
  }
  for (const auto& [key, name] : security.peers) {
    PODFLOW_RETURN_IF_ERROR(CheckCurveKey(key, "the public key of peer " + name));
  }
  if (!security.default_identity.empty() && !security.identities.count(security.default_identity)) {
    return Status::Invalid("no keys for the default identity " + security.default_identity);
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->security) return Status::Invalid("the context is secured already");
  auto shared = std::make_shared<const Security>(std::move(security));
  if (!shared->server.secret_key.empty()) {
    // Only a process that binds needs to answer ZAP.
    auto socket = std::make_shared<zmq::socket_t>();
    try {
      *socket = zmq::socket_t(impl_->zmq, zmq::socket_type::rep);
      socket->set(zmq::sockopt::linger, 0);
      socket->bind(kZapEndpoint);
    } catch (const zmq::error_t& e) {
      return FromZmq(Code::kIOError, "cannot start the ZAP handler", e);
    }
    impl_->zap = std::thread([impl = impl_.get(), socket, shared] {
      while (!impl->stopping) {
        if (!WaitReadable(*socket, std::chrono::milliseconds(100))) continue;
        std::vector<zmq::message_t> request = ReceiveParts(*socket);
        if (!request.empty()) AnswerZap(*socket, *shared, request);
      }
      socket->close();
    });
  }
  impl_->security = std::move(shared);
  return Status::Ok();
}

std::string RandomHex() {
  std::random_device entropy;
  const uint64_t bits = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return std::string(text, 16);
}

bool IsInproc(std::string_view endpoint) { return endpoint.starts_with("inproc://"); }

Status BindServer(Context& context, zmq::socket_t& socket, const std::string& endpoint) {
  try {
    if (IsInproc(endpoint)) {
      socket.bind(endpoint);
      return Status::Ok();
    }
    std::shared_ptr<const Security> security = context.impl().Secured();
    if (security) {
      if (security->server.secret_key.empty()) {
        return Status::Invalid("cannot serve " + endpoint + ": this process has no server secret key");
      }
      socket.set(zmq::sockopt::curve_server, true);
      socket.set(zmq::sockopt::curve_secretkey, security->server.secret_key);
      socket.set(zmq::sockopt::zap_domain, kZapDomain);
    }
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return FromZmq(Code::kIOError, "cannot bind " + endpoint, e);
  }
  return Status::Ok();
}

Status ConnectClient(Context& context, zmq::socket_t& socket, const std::string& endpoint,
                     const std::string& identity) {
  Context::Impl& impl = context.impl();
  std::shared_ptr<const Security> security = impl.Secured();
  const bool local = IsInproc(endpoint);
  const std::string& name = identity.empty() && security ? security->default_identity : identity;
  // A secured process speaks only as the identities it has keys for, on
  // every way out, its in-process ones included.
  auto keys = security ? security->identities.find(name) : decltype(security->identities.end()){};
  if (security && keys == security->identities.end()) {
    return Status::Invalid("cannot connect to " + endpoint + " as " + (name.empty() ? "nobody" : name) +
                           ": this process has no keys for that identity");
  }
  try {
    if (local) {
      // Unique per socket: a ROUTER admits one connection per routing id.
      if (!name.empty()) {
        socket.set(zmq::sockopt::routing_id, name + "#" + impl.client_prefix + "." + std::to_string(impl.next_client++));
      }
      socket.connect(endpoint);
      return Status::Ok();
    }
    if (security) {
      socket.set(zmq::sockopt::curve_serverkey, security->server.public_key);
      socket.set(zmq::sockopt::curve_publickey, keys->second.public_key);
      socket.set(zmq::sockopt::curve_secretkey, keys->second.secret_key);
    }
    socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return FromZmq(Code::kUnavailable, "cannot connect to " + endpoint, e);
  }
  return Status::Ok();
}

std::string PeerIdentity(const zmq::message_t& routing_id, zmq::message_t& part) {
  if (const char* user = zmq_msg_gets(part.handle(), "User-Id"); user != nullptr) return user;
  // A message from off the process carries the handshake's metadata; its
  // routing id is the peer's own word and names no one.
  if (zmq_msg_gets(part.handle(), "Socket-Type") != nullptr) return {};
  // In process: ConnectClient's routing ids are "identity#suffix".
  std::string_view id = routing_id.to_string_view();
  if (id.empty() || id[0] == '\0') return {};
  return std::string(id.substr(0, id.find('#')));
}

}  // namespace podflow::bus
