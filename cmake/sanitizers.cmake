# ETC_SANITIZE=ON builds everything with ASan + UBSan (tests must be clean under it).
if(ETC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# ETC_FUZZ=ON (clang only) instruments everything for libFuzzer, with ASan +
# UBSan, and links the targets in tests/fuzz against libFuzzer.
option(ETC_FUZZ "Build the fuzz targets with libFuzzer, ASan and UBSan (clang)" OFF)
if(ETC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ETC_FUZZ=ON needs clang (CXX=clang++ CC=clang)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
