// A fingerprint of what one registration's results depend on, written into report.json so
// that a batch rerun can tell a complete result of this pipeline from one of another
// (batch_resume.hpp).
#pragma once

#include <regpipe/host/pipeline.hpp>

#include <string>

namespace regpipe {

// 16 hex digits over: the input files (absolute path, volume, size and modification time:
// a file replaced since counts as another), every registration setting and component with
// its parameters as written, the output settings that choose the files and their content,
// and evaluation.truth. Not outputs.dir (a batch's image folders differ), parallel_io, resume
// or evaluation_timeout_s, which change how a result is made, not what it is.
std::string pipeline_digest(const Pipeline& pipeline);

// 16 hex digits of FNV-1a over `text`: stable across builds and machines, unlike std::hash.
std::string fingerprint(const std::string& text);

}  // namespace regpipe
