// The "key=value;key=value" escape hatch of bw24_model_params.options. Every key must be known
// to the caller's list, so a typo fails loudly instead of being ignored.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace bw24 {

using OptionMap = std::map<std::string, std::string>;

// known: accepted keys; an unknown key gives Code::kUnsupported naming the known ones.
absl::StatusOr<OptionMap> parse_options(std::string_view text,
                                        const std::vector<std::string_view>& known);

}  // namespace bw24
