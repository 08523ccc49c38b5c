// The launcher's status file; the format is docs/launcher.md's "The status file".
#include "vmgate/kube/utc_time.hpp"
#include "vmgate/launcher/status_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "vmgate/common/json.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/launcher/unique_fd.hpp"

namespace vmgate::launcher {
namespace {

// A status file is a few hundred bytes; anything far larger is not one.
constexpr std::size_t max_status_bytes = std::size_t{64} * 1024;

std::string system_error(const std::string& file, std::string_view what) {
  return file + ": " + std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

bool is_final_phase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed";
}

Status write_status_file(const std::string& path, const LauncherStatus& status) {
  json::Document document(rapidjson::kObjectType);
  auto& allocator = document.GetAllocator();
  json::set_string(document, "phase", status.phase, allocator);
  json::set_string(document, "reason", status.reason, allocator);
  json::set(document, "paused", json::Value(status.paused), allocator);
  json::Value& timestamps = json::ensure_object(document, "timestamps", allocator);
  json::set_string(timestamps, "started", status.started, allocator);
  if (!status.running.empty()) {
    json::set_string(timestamps, "running", status.running, allocator);
  }
  json::set_string(timestamps, "updated", status.updated.empty() ? kube::utc_now() : status.updated, allocator);
  const std::string text = json::to_string(document) + "\n";

  const std::string temporary = path + ".tmp";
  const UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) {
    return Error{system_error(temporary, "cannot create")};
  }
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t count = ::write(fd.get(), text.data() + written, text.size() - written);
    if (count < 0 && errno == EINTR) {
      continue;
    }
    if (count <= 0) {
      return Error{system_error(temporary, "cannot write")};
    }
    written += static_cast<std::size_t>(count);
  }
  // The node agent may read the file after a node crash: the rename must not publish an empty file.
  if (::fsync(fd.get()) != 0) {
    return Error{system_error(temporary, "cannot sync")};
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return Error{system_error(path, "cannot replace")};
  }
  return Ok{};
}

Result<LauncherStatus> read_status_file(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) {
    return Error{system_error(path, "cannot open")};
  }
  std::string text;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t count = ::read(fd.get(), buffer.data(), buffer.size());
    if (count < 0 && errno == EINTR) {
      continue;
    }
    if (count < 0) {
      return Error{system_error(path, "cannot read")};
    }
    if (count == 0) {
      break;
    }
    text.append(buffer.data(), static_cast<std::size_t>(count));
    if (text.size() > max_status_bytes) {
      return Error{path + ": larger than " + std::to_string(max_status_bytes) + " bytes: not a status file"};
    }
  }
  Result<json::Document, json::DecodeError> parsed = json::parse_json(text);
  if (!parsed) {
    return Error{path + ": not JSON: " + parsed.error().message};
  }
  const json::Value& root = *parsed;
  const json::Value* phase = root.IsObject() ? json::find(root, "phase") : nullptr;
  if (phase == nullptr || !phase->IsString()) {
    return Error{path + ": phase: expected a string"};
  }
  LauncherStatus status;
  status.phase = json::as_view(*phase);
  status.reason = json::find_string(root, "reason");
  const json::Value* paused = json::find(root, "paused");
  status.paused = paused != nullptr && paused->IsBool() && paused->GetBool();
  if (const json::Value* timestamps = json::find_object(root, "timestamps"); timestamps != nullptr) {
    status.started = json::find_string(*timestamps, "started");
    status.running = json::find_string(*timestamps, "running");
    status.updated = json::find_string(*timestamps, "updated");
  }
  return status;
}

}  // namespace vmgate::launcher
