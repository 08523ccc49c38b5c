#include "vmgate/common/options.hpp"

#include <algorithm>
#include <optional>

namespace vmgate::common {

namespace {

const OptionSpec* find_long(std::span<const OptionSpec> specs, std::string_view name) {
  const auto it = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& spec) { return spec.name == name; });
  return it == specs.end() ? nullptr : &*it;
}

const OptionSpec* find_short(std::span<const OptionSpec> specs, char alias) {
  const auto it = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& spec) { return spec.alias == alias; });
  return it == specs.end() ? nullptr : &*it;
}

std::string label(const OptionSpec& spec, bool alias_column) {
  std::string text;
  if (alias_column) {
    text = spec.alias != '\0' ? std::string("-") + spec.alias + ", " : "    ";
  }
  text += "--";
  text += spec.name;
  if (!spec.flag && !spec.value_name.empty()) {
    text += ' ';
    text += spec.value_name;
  }
  return text;
}

}  // namespace

bool ParsedArgs::has(std::size_t index) const {
  return std::any_of(options.begin(), options.end(), [&](const ParsedOption& option) { return option.index == index; });
}

std::string_view OptionError::problem() const {
  switch (kind) {
    case OptionErrorKind::unknown_option:
      return "";
    case OptionErrorKind::missing_value:
      return "needs a value";
    case OptionErrorKind::unexpected_value:
      return "takes no value";
    case OptionErrorKind::empty_value:
      return "needs a non-empty value";
    case OptionErrorKind::repeated:
      return "given more than once";
  }
  return "";
}

std::string OptionError::message() const {
  if (kind == OptionErrorKind::unknown_option) {
    return "unknown option " + option;
  }
  return "option " + option + " " + std::string(problem());
}

std::string OptionError::options_only_message(std::string_view command) const {
  if (kind == OptionErrorKind::unknown_option) {
    return option.starts_with("--") ? message() : unexpected_argument(argument, command);
  }
  if (kind == OptionErrorKind::empty_value) {
    return option + " must not be empty";
  }
  return option + " " + std::string(problem());
}

std::string unexpected_argument(std::string_view argument, std::string_view command) {
  std::string text = "unexpected argument \"";
  text += argument;
  text += "\" (";
  text += command;
  text += " takes only options)";
  return text;
}

Result<ParsedArgs, OptionError> parse_options(std::span<const std::string_view> args,
                                              std::span<const OptionSpec> specs) {
  ParsedArgs parsed;
  std::vector<bool> seen(specs.size(), false);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {
      parsed.operands.insert(parsed.operands.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    // "-" conventionally names stdin, so it is an operand like any word without a leading dash.
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.operands.push_back(arg);
      continue;
    }
    const OptionSpec* spec = nullptr;
    std::string_view written;
    std::optional<std::string_view> inline_value;
    if (arg[1] == '-') {
      written = arg;
      if (const std::size_t equals = arg.find('='); equals != std::string_view::npos) {
        written = arg.substr(0, equals);
        inline_value = arg.substr(equals + 1);
      }
      spec = find_long(specs, written.substr(2));
    } else {
      written = arg.substr(0, 2);
      spec = find_short(specs, arg[1]);
      if (arg.size() > 2) {
        // -ojson and -o=json both mean "json": an '=' right after a short name is a separator.
        std::string_view rest = arg.substr(2);
        if (rest.starts_with('=')) {
          rest.remove_prefix(1);
        }
        inline_value = rest;
      }
    }
    auto fail = [&](OptionErrorKind kind) { return OptionError{kind, std::string(written), std::string(arg), spec}; };
    if (spec == nullptr) {
      return fail(OptionErrorKind::unknown_option);
    }
    std::string_view value;
    if (spec->flag) {
      if (inline_value) {
        return fail(OptionErrorKind::unexpected_value);
      }
    } else if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      // The next argument is the value even when it starts with '-', so that values such as
      // "-" (stdin) or "-1" reach the command, which can say what is wrong with them.
      value = args[++i];
    } else {
      return fail(OptionErrorKind::missing_value);
    }
    if (spec->non_empty && !spec->flag && value.empty()) {
      return fail(OptionErrorKind::empty_value);
    }
    const auto index = static_cast<std::size_t>(spec - specs.data());
    if (seen[index] && !spec->repeatable) {
      return fail(OptionErrorKind::repeated);
    }
    seen[index] = true;
    parsed.options.push_back(ParsedOption{index, value});
  }
  return parsed;
}

Result<ParsedArgs> parse_options_only(std::span<const std::string_view> args, std::span<const OptionSpec> specs,
                                      std::string_view command, OptionWording wording) {
  Result<ParsedArgs, OptionError> parsed = parse_options(args, specs);
  const bool plain = wording == OptionWording::plain;
  if (!parsed) {
    return Error{plain ? parsed.error().message() : parsed.error().options_only_message(command)};
  }
  if (!parsed->operands.empty()) {
    const std::string_view operand = parsed->operands.front();
    return Error{plain ? "unexpected argument " + std::string(operand) : unexpected_argument(operand, command)};
  }
  return std::move(*parsed);
}

std::string format_options(std::span<const OptionSpec> specs) {
  const bool alias_column =
      std::any_of(specs.begin(), specs.end(), [](const OptionSpec& spec) { return spec.alias != '\0'; });
  std::size_t width = 0;
  for (const OptionSpec& spec : specs) {
    width = std::max(width, label(spec, alias_column).size());
  }
  const std::string indent(2 + width + 2, ' ');
  std::string text;
  for (const OptionSpec& spec : specs) {
    const std::string name = label(spec, alias_column);
    text += "  " + name;
    std::string_view help = spec.help;
    if (help.empty()) {
      text += '\n';
      continue;
    }
    text += std::string(width + 2 - name.size(), ' ');
    for (std::size_t line = 0; !help.empty(); ++line) {
      const std::size_t end = help.find('\n');
      text += line == 0 ? "" : indent;
      text += help.substr(0, end);
      text += '\n';
      help = end == std::string_view::npos ? std::string_view{} : help.substr(end + 1);
    }
  }
  return text;
}

}  // namespace vmgate::common
