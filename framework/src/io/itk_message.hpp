// ITK exception descriptions made fit for a one-line error message.
#pragma once

#include <string>

namespace regpipe {

// ITK descriptions start with "ITK ERROR: TransformFileReaderTemplate(0x55d0...): " and may
// span lines; this keeps only the words that explain, on one line, without a trailing colon.
// Empty when nothing is left.
std::string readable_itk_description(const std::string& description);

}  // namespace regpipe
