// Making a file's name durable: after a file is created or renamed into place,
// the directory holding it is synced, or a machine loss can take the name back
// (storage's FORMAT file and restore, the scheduled backups, aischedctl's save).
#pragma once

#include <string>

namespace aisched {

/// fsyncs directory `dir`: 0, or the errno of the open or the fsync that failed.
int sync_directory(const std::string& dir);

}  // namespace aisched
