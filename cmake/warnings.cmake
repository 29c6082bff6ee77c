# Warnings applied to etc's own targets (not third-party code).
function(etc_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter
                                           -Wnon-virtual-dtor -Wimplicit-fallthrough)
endfunction()
