// foldc's prelude: the layer definitions every program can instantiate
// (fc, lstm, gru), written in the language in Prelude.fold and compiled into
// foldc as text.
#pragma once

#include <string_view>

namespace foldc {

/// The name diagnostics give the prelude's text.
inline constexpr std::string_view kPreludeFileName = "prelude.fold";

/// The text of Prelude.fold.
std::string_view preludeSource();

} // namespace foldc
