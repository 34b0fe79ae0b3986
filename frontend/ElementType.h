// The element type of a tensor, as written (`f32`, `i32`) and as typed.
#pragma once

namespace foldc {

enum class ElementType { F32, I32 };

} // namespace foldc
