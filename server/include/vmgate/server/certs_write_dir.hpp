#pragma once
// --write-dir: files replaced all at once, as the kubelet's AtomicWriter updates a mounted
// Secret. The content goes into a new directory DIR/..<time>.<random>; the symlink DIR/..data
// is pointed at it by rename(2) (atomic); DIR/<name> are symlinks to ..data/<name>, made once.
// A reader that opens DIR/tls.crt and then DIR/tls.key sees both from one version, unless the
// swap falls between the two opens, and `vmgate serve` re-reads both when either changes.
// Thread-safety: one writer per directory.
#include <filesystem>
#include <map>
#include <string>

#include "vmgate/common/result.hpp"

namespace vmgate::certs {

/// Makes DIR hold exactly `files` (name -> content; tls.key and every *.key mode 0600, the
/// others 0644). Nothing is written when the current version already holds the same content:
/// returns false; true after a swap. The previous version's directory is removed after the swap.
/// Errors name the path: DIR not creatable, a name that is not a plain file name, a DIR/<name>
/// that exists and is not the symlink this writer makes, write or rename failures.
Result<bool> write_atomically(const std::filesystem::path& directory, const std::map<std::string, std::string>& files);

}  // namespace vmgate::certs
