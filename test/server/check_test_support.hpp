#pragma once
// Helpers for the `vmgate check` tests: a scratch directory and running the built binary.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vmgate::testing {

/// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "vmgate-check-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Writes `content` to `relative` (parent directories created); returns the full path.
  std::string write(const std::string& relative, const std::string& content) const {
    const std::filesystem::path file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary);
    out << content;
    if (!out) {
      throw std::runtime_error("cannot write " + file.string());
    }
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct ProcessResult {
  int status = -1;  // exit status, or -1 when the process did not exit normally
  std::string out;
  std::string err;
};

/// Runs `program` with `args` (fork + execv, no shell), stdin from `input`, stdout and stderr
/// captured through files (no pipe deadlock on large outputs). `environment` entries are set
/// in the child ("NAME=value").
inline ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                                 const std::string& input = "", const std::vector<std::string>& environment = {}) {
  TempDir scratch;
  const std::string in_path = scratch.write("stdin", input);
  const std::string out_path = (scratch.path() / "stdout").string();
  const std::string err_path = (scratch.path() / "stderr").string();
  std::vector<std::string> argv_storage{program};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    const int in_fd = ::open(in_path.c_str(), O_RDONLY);
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0 || ::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 ||
        ::dup2(err_fd, 2) < 0) {
      ::_exit(127);
    }
    for (const std::string& variable : environment) {
      ::putenv(const_cast<char*>(variable.c_str()));  // NOLINT: the child execs right away
    }
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  int wait_status = 0;
  if (::waitpid(pid, &wait_status, 0) != pid) {
    throw std::runtime_error("waitpid failed");
  }
  ProcessResult result;
  result.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

}  // namespace vmgate::testing
