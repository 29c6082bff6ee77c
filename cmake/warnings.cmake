# Warnings applied to etc's own targets (not third-party code).
function(etc_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter
                                           -Wnon-virtual-dtor -Wimplicit-fallthrough
                                           # GCC 12 reports false -Wrestrict positives inside
                                           # std::string concatenation (GCC bug 105329).
                                           $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
endfunction()
