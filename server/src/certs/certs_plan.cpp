#include "vmgate/server/certs_plan.hpp"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <set>

namespace vmgate::certs {

namespace {

// A serving pair (CA and leaf) read from four keys of the Secret, with what is wrong with it.
struct PairState {
  // Readable, a CA, its key matching, not expired; kept even when the leaf is unusable, since the
  // endpoints may still serve an earlier leaf of it.
  std::optional<Certificate> ca;
  std::optional<Certificate> leaf;  // readable, its key matching, signed by `ca`, not expired: usable
  std::vector<std::string> problems;
  bool present = false;  // any of the four keys is there
};

const std::string* find_data(const SecretState& secret, const char* name) {
  const auto found = secret.data.find(name);
  return found == secret.data.end() ? nullptr : &found->second;
}

std::string time_text(std::int64_t unix_seconds) {
  std::time_t time = unix_seconds;
  std::tm parts{};
  gmtime_r(&time, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

PairState read_pair(const SecretState& secret, const char* ca_crt, const char* ca_key, const char* tls_crt,
                    const char* tls_key, std::int64_t now) {
  PairState pair;
  const std::string* ca_text = find_data(secret, ca_crt);
  const std::string* ca_key_text = find_data(secret, ca_key);
  const std::string* leaf_text = find_data(secret, tls_crt);
  const std::string* leaf_key_text = find_data(secret, tls_key);
  pair.present = ca_text != nullptr || ca_key_text != nullptr || leaf_text != nullptr || leaf_key_text != nullptr;
  if (!pair.present) {
    return pair;
  }
  auto missing = [&](const std::string* text, const char* name) {
    if (text == nullptr || text->empty()) {
      pair.problems.push_back(std::string(name) + " is missing");
      return true;
    }
    return false;
  };
  std::optional<Certificate> ca;
  if (!missing(ca_text, ca_crt)) {
    Result<Certificate> parsed = parse_certificate(*ca_text, ca_crt);
    if (!parsed) {
      pair.problems.push_back(parsed.error().message);
    } else if (!parsed->is_ca) {
      pair.problems.push_back(std::string(ca_crt) + " is not a CA certificate (no basicConstraints CA:TRUE)");
    } else if (parsed->not_after <= now) {
      pair.problems.push_back(std::string(ca_crt) + " expired at " + time_text(parsed->not_after));
    } else if (!missing(ca_key_text, ca_key)) {
      if (Status key = check_key(*parsed, *ca_key_text, ca_key); !key) {
        pair.problems.push_back(key.error().message + " " + ca_crt);
      } else {
        ca = std::move(parsed.value());
      }
    }
  }
  if (!missing(leaf_text, tls_crt)) {
    Result<Certificate> parsed = parse_certificate(*leaf_text, tls_crt);
    if (!parsed) {
      pair.problems.push_back(parsed.error().message);
    } else if (parsed->not_after <= now) {
      pair.problems.push_back(std::string(tls_crt) + " expired at " + time_text(parsed->not_after));
    } else if (!missing(leaf_key_text, tls_key)) {
      if (Status key = check_key(*parsed, *leaf_key_text, tls_key); !key) {
        pair.problems.push_back(key.error().message + " " + tls_crt);
      } else if (ca && !signed_by(*parsed, *ca)) {
        pair.problems.push_back(std::string(tls_crt) + " is not signed by " + ca_crt);
      } else if (ca) {
        pair.leaf = std::move(parsed.value());
      }
    }
  }
  pair.ca = std::move(ca);
  return pair;
}

// The unexpired CA certificates of a PEM bundle; unreadable text is reported and skipped.
std::vector<Certificate> read_bundle(const std::string& pem, std::string_view what, std::int64_t now,
                                     std::vector<std::string>* problems) {
  std::vector<Certificate> kept;
  if (pem.empty()) {
    return kept;
  }
  Result<std::vector<Certificate>> parsed = parse_certificates(pem, what);
  if (!parsed) {
    if (problems != nullptr) {
      problems->push_back(parsed.error().message);
    }
    return kept;
  }
  for (Certificate& certificate : *parsed) {
    if (certificate.is_ca && certificate.not_after > now) {
      kept.push_back(std::move(certificate));
    }
  }
  return kept;
}

// Certificates without repeats, in first-seen order, at most `limit` of them: the required ones
// (the current and the next CA) always, then the others that expire last.
std::vector<Certificate> merge(const std::vector<const Certificate*>& candidates, const std::set<std::string>& required,
                               std::size_t limit) {
  std::vector<const Certificate*> unique;
  std::set<std::string> seen;
  for (const Certificate* certificate : candidates) {
    if (seen.insert(certificate->fingerprint()).second) {
      unique.push_back(certificate);
    }
  }
  while (unique.size() > std::max(limit, required.size())) {
    // Drop the optional one that expires first.
    auto victim = unique.end();
    for (auto it = unique.begin(); it != unique.end(); ++it) {
      if (required.count((*it)->fingerprint()) == 0 &&
          (victim == unique.end() || (*it)->not_after < (*victim)->not_after)) {
        victim = it;
      }
    }
    if (victim == unique.end()) {
      break;
    }
    unique.erase(victim);
  }
  std::vector<Certificate> result;
  result.reserve(unique.size());
  for (const Certificate* certificate : unique) {
    result.push_back(copy(*certificate));
  }
  return result;
}

std::vector<const Certificate*> pointers(const std::vector<Certificate>& certificates) {
  std::vector<const Certificate*> result;
  result.reserve(certificates.size() + 2);
  for (const Certificate& certificate : certificates) {
    result.push_back(&certificate);
  }
  return result;
}

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Why a valid pair must be renewed now; empty when it need not.
std::vector<std::string> due_reasons(const PairState& pair, const Settings& settings, const SubjectNames& names,
                                     std::int64_t now) {
  std::vector<std::string> reasons;
  if (pair.leaf->not_after - now <= settings.renew_before) {
    reasons.push_back("tls.crt expires at " + time_text(pair.leaf->not_after) + ", within --renew-before");
  }
  if (pair.ca->not_after - now <= settings.renew_before) {
    reasons.push_back("ca.crt expires at " + time_text(pair.ca->not_after) + ", within --renew-before");
  }
  if (sorted(pair.leaf->dns_names) != sorted(names.dns) || sorted(pair.leaf->ip_addresses) != sorted(names.ip)) {
    std::string wanted;
    for (const std::string& name : names.dns) {
      wanted += (wanted.empty() ? "" : ",") + name;
    }
    for (const std::string& address : names.ip) {
      wanted += (wanted.empty() ? "" : ",") + address;
    }
    reasons.push_back("tls.crt's subjectAltNames differ from " + wanted);
  }
  return reasons;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : "; ") + part;
  }
  return text;
}

// The data with the four keys of a pair set from `fresh` (or removed when `fresh` is null).
void set_pair(std::map<std::string, std::string>& data, const char* ca_crt, const char* ca_key, const char* tls_crt,
              const char* tls_key, const FreshPair* fresh) {
  if (fresh == nullptr) {
    data.erase(ca_crt);
    data.erase(ca_key);
    data.erase(tls_crt);
    data.erase(tls_key);
    return;
  }
  data[ca_crt] = fresh->ca_crt;
  data[ca_key] = fresh->ca_key;
  data[tls_crt] = fresh->tls_crt;
  data[tls_key] = fresh->tls_key;
}

Step secret_write(const PlanInput& input, std::map<std::string, std::string> data, std::string event,
                  std::string reason) {
  Step step;
  step.action = Action::write_secret;
  step.create = !input.secret.exists;
  step.data = std::move(data);
  step.event = std::move(event);
  step.reason = std::move(reason);
  return step;
}

std::int64_t started_at(const SecretState& secret) {
  const auto found = secret.annotations.find(annotation::started);
  if (found == secret.annotations.end()) {
    return -1;
  }
  try {
    return std::stoll(found->second);
  } catch (...) {
    return -1;
  }
}

}  // namespace

std::string url_host(std::string_view url) {
  constexpr std::string_view scheme = "https://";
  if (!url.starts_with(scheme)) {
    return {};
  }
  std::string_view rest = url.substr(scheme.size());
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    rest = rest.substr(at + 1);
  }
  if (rest.starts_with('[')) {
    const std::size_t close = rest.find(']');
    return close == std::string_view::npos ? std::string() : std::string(rest.substr(1, close - 1));
  }
  return std::string(rest.substr(0, rest.find(':')));
}

SubjectNames desired_names(const Settings& settings, const std::vector<WebhookConfiguration>& configurations) {
  SubjectNames names;
  const std::string service = settings.service;
  const std::string in_namespace = service + "." + settings.namespace_name;
  names.dns = {service, in_namespace, in_namespace + ".svc", in_namespace + ".svc." + settings.cluster_domain};
  for (const WebhookConfiguration& configuration : configurations) {
    for (const Webhook& webhook : configuration.webhooks) {
      const std::string host = url_host(webhook.url);
      if (host.empty()) {
        continue;
      }
      if (const std::string ip = canonical_ip(host); !ip.empty()) {
        if (std::find(names.ip.begin(), names.ip.end(), ip) == names.ip.end()) {
          names.ip.push_back(ip);
        }
      } else if (std::find(names.dns.begin(), names.dns.end(), host) == names.dns.end()) {
        names.dns.push_back(host);
      }
    }
  }
  return names;
}

std::string configuration_id(const WebhookConfiguration& configuration) {
  return (configuration.kind == ConfigurationKind::mutating ? "mutating/" : "validating/") + configuration.name;
}

Step plan(const PlanInput& input) {
  const std::int64_t now = input.now;
  const Settings& settings = input.settings;
  const SecretState& secret = input.secret;
  const SubjectNames names = desired_names(settings, input.configurations);

  std::vector<std::string> problems;
  const PairState current = read_pair(secret, key::ca_crt, key::ca_key, key::tls_crt, key::tls_key, now);
  problems.insert(problems.end(), current.problems.begin(), current.problems.end());
  if (secret.exists && !current.present) {
    problems.emplace_back("the Secret holds no serving pair yet");
  }
  const PairState next =
      read_pair(secret, key::next_ca_crt, key::next_ca_key, key::next_tls_crt, key::next_tls_key, now);
  for (const std::string& problem : next.problems) {
    problems.push_back(problem + " (an unfinished rotation's new pair; discarded)");
  }
  const std::string* bundle_text = find_data(secret, key::ca_bundle);
  const std::vector<Certificate> secret_bundle =
      read_bundle(bundle_text != nullptr ? *bundle_text : std::string(), key::ca_bundle, now, &problems);
  // What the configurations trust now: the record of what may be served when the Secret is lost
  // or unreadable.
  std::vector<Certificate> trusted;
  for (const WebhookConfiguration& configuration : input.configurations) {
    for (const Webhook& webhook : configuration.webhooks) {
      std::vector<Certificate> cas = read_bundle(webhook.ca_bundle, "caBundle", now, nullptr);
      std::move(cas.begin(), cas.end(), std::back_inserter(trusted));
    }
  }

  auto outdated_configurations = [&](const std::string& bundle) {
    std::vector<std::string> outdated;
    for (const WebhookConfiguration& configuration : input.configurations) {
      const bool stale = std::any_of(configuration.webhooks.begin(), configuration.webhooks.end(),
                                     [&](const Webhook& webhook) { return webhook.ca_bundle != bundle; });
      if (stale) {
        outdated.push_back(configuration_id(configuration));
      }
    }
    return outdated;
  };
  auto with_problems = [&](Step step) {
    step.problems = problems;
    return step;
  };
  auto publish = [&](const std::string& bundle, std::string reason) -> std::optional<Step> {
    std::vector<std::string> outdated = outdated_configurations(bundle);
    if (outdated.empty()) {
      return std::nullopt;
    }
    Step step;
    step.action = Action::patch_webhooks;
    step.event = "CA bundle published";
    step.reason = std::move(reason);
    step.bundle = bundle;
    step.outdated = std::move(outdated);
    return with_problems(std::move(step));
  };

  // 1. A rotation in flight: its bundle (old and new CA) in the Secret and every
  //    configuration, then the switch.
  if (next.leaf) {
    std::vector<const Certificate*> candidates = pointers(secret_bundle);
    if (current.ca) {
      candidates.push_back(&*current.ca);
    }
    candidates.push_back(&*next.ca);
    std::set<std::string> required{next.ca->fingerprint()};
    if (current.ca) {
      required.insert(current.ca->fingerprint());
    }
    const std::string bundle = bundle_pem(merge(candidates, required, settings.max_bundle));
    if (bundle_text == nullptr || *bundle_text != bundle) {
      std::map<std::string, std::string> data = secret.data;
      data[key::ca_bundle] = bundle;
      return with_problems(secret_write(input, std::move(data), "CA bundle repaired",
                                        "ca-bundle.crt must hold the old and the new CA during a rotation"));
    }
    if (std::optional<Step> step = publish(bundle, "the new CA must be trusted before its certificate is served")) {
      step->settle = true;
      return *step;
    }
    std::map<std::string, std::string> data = secret.data;
    const FreshPair promoted{secret.data.at(key::next_ca_crt), secret.data.at(key::next_ca_key),
                             secret.data.at(key::next_tls_crt), secret.data.at(key::next_tls_key)};
    set_pair(data, key::ca_crt, key::ca_key, key::tls_crt, key::tls_key, &promoted);
    set_pair(data, key::next_ca_crt, key::next_ca_key, key::next_tls_crt, key::next_tls_key, nullptr);
    Step step =
        secret_write(input, std::move(data), "serving pair switched", "every webhook configuration trusts the new CA");
    step.annotations[annotation::phase] = "retiring";
    return with_problems(std::move(step));
  }

  // 2. A fresh pair when there is no usable one, or when it is due.
  std::vector<std::string> due;
  if (!current.leaf) {
    due = current.problems;
    if (due.empty()) {
      due.emplace_back(secret.exists ? "the Secret holds no serving pair" : "the Secret does not exist");
    }
  } else {
    due = due_reasons(current, settings, names, now);
    if (due.empty() && settings.force_renew) {
      due.emplace_back("--force-renew");
    }
  }
  if (!due.empty()) {
    if (!input.fresh) {
      Step step;
      step.action = Action::issue;
      step.event = "renewal due";
      step.reason = joined(due);
      step.names = names;
      return with_problems(std::move(step));
    }
    // Every CA that may have signed what is served now stays trusted until the new leaf is.
    std::vector<const Certificate*> candidates = pointers(secret_bundle);
    if (current.ca) {
      candidates.push_back(&*current.ca);
    }
    for (const Certificate& certificate : trusted) {
      candidates.push_back(&certificate);
    }
    Result<Certificate> fresh_ca = parse_certificate(input.fresh->ca_crt, "the issued CA");
    if (!fresh_ca) {
      Step step;
      step.action = Action::wait;
      step.reason = fresh_ca.error().message;
      return with_problems(std::move(step));
    }
    std::vector<Certificate> old = merge(candidates, {}, settings.max_bundle > 1 ? settings.max_bundle - 1 : 1);
    candidates = pointers(old);
    candidates.push_back(&*fresh_ca);
    const std::string bundle = bundle_pem(merge(candidates, {fresh_ca->fingerprint()}, settings.max_bundle));
    std::map<std::string, std::string> data = secret.data;
    data[key::ca_bundle] = bundle;
    Step step;
    if (old.empty()) {
      // Nothing is trusted by the configurations, so nothing served now can be verified: no
      // overlap to keep. The pair goes straight into service.
      set_pair(data, key::ca_crt, key::ca_key, key::tls_crt, key::tls_key, &*input.fresh);
      set_pair(data, key::next_ca_crt, key::next_ca_key, key::next_tls_crt, key::next_tls_key, nullptr);
      step = secret_write(input, std::move(data), "certificate issued", joined(due));
      step.annotations[annotation::phase] = "";
      step.annotations[annotation::started] = "";
      step.annotations[annotation::reason] = "";
    } else {
      set_pair(data, key::next_ca_crt, key::next_ca_key, key::next_tls_crt, key::next_tls_key, &*input.fresh);
      step = secret_write(input, std::move(data), "rotation started", joined(due));
      step.annotations[annotation::phase] = "publishing";
      step.annotations[annotation::started] = std::to_string(now);
      step.annotations[annotation::reason] = joined(due);
    }
    step.starts_rotation = true;
    return with_problems(std::move(step));
  }

  // 3. A valid pair: the bundle in the Secret holds it (and what an unfinished rotation still
  //    needs), the configurations carry that bundle, and the old CAs go once every endpoint
  //    serves a leaf of the current CA.
  std::vector<const Certificate*> candidates = pointers(secret_bundle);
  candidates.push_back(&*current.ca);
  const std::vector<Certificate> kept = merge(candidates, {current.ca->fingerprint()}, settings.max_bundle);
  const std::string bundle = bundle_pem(kept);
  if (next.present || bundle_text == nullptr || *bundle_text != bundle) {
    std::map<std::string, std::string> data = secret.data;
    data[key::ca_bundle] = bundle;
    set_pair(data, key::next_ca_crt, key::next_ca_key, key::next_tls_crt, key::next_tls_key, nullptr);
    return with_problems(secret_write(input, std::move(data), "Secret repaired",
                                      "ca-bundle.crt must hold ca.crt and no expired or unreadable CA" +
                                          std::string(next.present ? "; an unusable new pair discarded" : "")));
  }
  if (std::optional<Step> step = publish(bundle, "the configurations must trust the CAs of ca-bundle.crt")) {
    return *step;
  }
  if (kept.size() > 1) {
    if (!input.probe) {
      Step step;
      step.action = Action::probe;
      step.event = "probing endpoints";
      step.reason = "the old CA stays until every endpoint serves a certificate of ca.crt";
      step.probe_ca = current.ca->pem;
      return with_problems(std::move(step));
    }
    std::vector<std::string> behind;
    for (const ProbeResult& result : *input.probe) {
      if (!result.ok) {
        behind.push_back(result.endpoint + ": " + result.detail);
      }
    }
    if (input.probe->empty() || !behind.empty()) {
      Step step;
      step.action = Action::wait;
      step.event = "waiting for endpoints";
      step.reason = input.probe->empty() ? std::string("no serving endpoint found to probe")
                                         : "not serving a certificate of ca.crt yet: " + joined(behind);
      return with_problems(std::move(step));
    }
    std::map<std::string, std::string> data = secret.data;
    data[key::ca_bundle] = current.ca->pem;
    Step step =
        secret_write(input, std::move(data), "old CA dropped",
                     "every endpoint (" + std::to_string(input.probe->size()) + ") serves a certificate of ca.crt");
    step.annotations[annotation::phase] = "";
    step.annotations[annotation::started] = "";
    step.annotations[annotation::reason] = "";
    if (const std::int64_t started = started_at(secret); started >= 0 && started <= now) {
      step.rotation_seconds = now - started;
    }
    return with_problems(std::move(step));
  }
  Step step;
  step.action = Action::steady;
  step.reason =
      "tls.crt valid until " + time_text(current.leaf->not_after) + ", CA until " + time_text(current.ca->not_after);
  return with_problems(std::move(step));
}

}  // namespace vmgate::certs
