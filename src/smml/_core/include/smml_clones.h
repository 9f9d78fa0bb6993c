/* Compile a header's multi-versioned functions once per instruction set (smml_platform.h).
 *
 * A header H defines its cloned functions in the #else branch of #ifndef SMML_CLONE_PASS,
 * each named SMML_SFX(name) and declared SMML_CLONED, then, in its plain part:
 *
 *     #define SMML_CLONE_SELF "H"          (its own file name)
 *     #include "smml_clones.h"
 *     #define name(...) SMML_PICK(name, __VA_ARGS__)     (one per function)
 *
 * This file includes H twice with SMML_CLONE_PASS defined: portable (suffix _base) and, where
 * SMML_X86_DISPATCH, for AVX2 (suffix _avx2); SMML_PICK calls the copy of smml_isa().
 * SMML_CLONE_ATTR (optional, default empty): attributes both copies get. No include guard:
 * every header includes it once. */
#include "smml_platform.h"

#ifndef SMML_CLONE_ATTR
#define SMML_CLONE_ATTR
#endif
#define SMML_CLONE_PASS 1
#define SMML_SFX(n) n##_base
#define SMML_CLONED static SMML_MAYBE_UNUSED SMML_CLONE_ATTR
#include SMML_CLONE_SELF
#undef SMML_SFX
#undef SMML_CLONED
#if SMML_X86_DISPATCH
#define SMML_SFX(n) n##_avx2
#define SMML_CLONED static SMML_MAYBE_UNUSED SMML_CLONE_ATTR SMML_TARGET_AVX2
#include SMML_CLONE_SELF
#undef SMML_SFX
#undef SMML_CLONED
#endif
#undef SMML_CLONE_PASS
#undef SMML_CLONE_ATTR
#undef SMML_CLONE_SELF
