# ETC_SANITIZE=ON builds everything with ASan + UBSan (tests must be clean under it).
if(ETC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
