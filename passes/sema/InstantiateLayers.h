// Layer instantiation: each instance of a user-defined layer becomes the
// declarations it stands for, named by its instance path.
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include <memory>

namespace foldc {

/// Replaces every `layer NAME = L(args);` whose L is a layer definition
/// (`layer L(constants)(parameters) { ... }`) by
///  - a `const NAME.K` per int or float constant K (the argument, checked by
///    constant evaluation against the kind L declares),
///  - the declarations of the layers L is made of (`NAME.INNER`), recursively,
///  - a def `NAME`: L's body with its constants and inner layers replaced, so
///    its `param`s are this instance's own (named `NAME.W` in the params file).
/// Activation and init constants are replaced by the expression given.
/// `trainable:` and `lr_scale:` apply to everything in the instance,
/// `init:` to its params written without an initialiser. Layer definitions
/// stay in the module for name resolution (using one as a value is an error)
/// but are never checked themselves: an unused one gets a warning.
/// The `prelude`'s definitions (fc, lstm, gru: Prelude.fold, parsed) are
/// added to the module first, but for names the program declares itself;
/// their instances are marked (InstanceOrigin::prelude) and unused ones get
/// no warning.
/// Reports located errors (unknown constants, wrong counts and kinds, a layer
/// that contains itself, `layer` statements outside a layer definition).
std::unique_ptr<Module> instantiateLayers(std::unique_ptr<Module> parsed,
                                          std::unique_ptr<Module> prelude, DiagnosticEngine &diag);

/// Errors in the body of `fn` get a note at the instance it was made for
/// (nothing when `fn` is not an instance's def).
DiagnosticContext instanceContext(DiagnosticEngine &diag, const FunctionDecl &fn);

} // namespace foldc
