#include "vmgate/node/event_log.hpp"

#include <chrono>
#include <string>

#include "vmgate/common/json.hpp"
#include "vmgate/common/json_writer.hpp"

namespace vmgate::node {

namespace {

void string_member(rapidjson::Writer<json::StringSink>& writer, std::string_view key, std::string_view value) {
  writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

}  // namespace

void EventLog::write(std::string_view level, std::string_view message, Fields fields) {
  std::string line;
  json::StringSink sink(line);
  rapidjson::Writer<json::StringSink> writer(sink);
  writer.StartObject();
  writer.Key("ts");
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  writer.Double(static_cast<double>(micros.count()) / 1e6);
  string_member(writer, "level", level);
  string_member(writer, "msg", message);
  for (const auto& [key, value] : fields) {
    string_member(writer, key, value);
  }
  writer.EndObject();
  sink.finish();
  const std::lock_guard lock(mutex_);
  out_ << line << '\n' << std::flush;
}

}  // namespace vmgate::node
